/**
 * Copyright 2022 Gravwell, Inc. All rights reserved.
 *
 * Contact: [legal@gravwell.io](mailto:legal@gravwell.io)
 *
 * This software may be modified and distributed under the terms of the MIT
 * license. See the LICENSE file for details.
 */

import { APIContext } from '../functions/utils/api-context';

export const getTestTypes = (): {
	unitTests: boolean;
	integrationTests: boolean;
} => {
	console.log('Using browser settings for JS Client test types');
	return {
		unitTests: true,
		integrationTests: false,
	};
};

export const getTestContext = async (): Promise<APIContext> => {
	console.log('Using browser settings for JS Client test context');
	return Promise.resolve({ host: '', useEncryption: false, authToken: null, fetch });
};
