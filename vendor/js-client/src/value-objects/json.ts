/**
 * Copyright 2022 Gravwell, Inc. All rights reserved.
 *
 * Contact: [legal@gravwell.io](mailto:legal@gravwell.io)
 *
 * This software may be modified and distributed under the terms of the MIT
 * license. See the LICENSE file for details.
 */

// TODO(ts4): Use recurssive type = string | number | boolean | null | undefined | Array<RawJSON> | Record<string, RawJSON>;
export type RawJSON = Record<string, unknown>;
