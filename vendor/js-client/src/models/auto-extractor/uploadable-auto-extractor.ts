/**
 * Copyright 2022 Gravwell, Inc. All rights reserved.
 *
 * Contact: [legal@gravwell.io](mailto:legal@gravwell.io)
 *
 * This software may be modified and distributed under the terms of the MIT
 * license. See the LICENSE file for details.
 */

import { File } from '~/functions/utils/file';
import { NumericID } from '~/value-objects/id';

export interface UploadableAutoExtractor {
	file: File;

	groupIDs?: Array<NumericID>;
	labels?: Array<string>;
	isGlobal?: boolean;
}
