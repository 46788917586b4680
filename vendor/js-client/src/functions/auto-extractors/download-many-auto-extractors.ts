/**
 * Copyright 2022 Gravwell, Inc. All rights reserved.
 *
 * Contact: [legal@gravwell.io](mailto:legal@gravwell.io)
 *
 * This software may be modified and distributed under the terms of the MIT
 * license. See the LICENSE file for details.
 */

import { UUID } from '~/value-objects/id';
import { APIContext } from '../utils/api-context';
import { buildHTTPRequestWithAuthFromContext } from '../utils/build-http-request';
import { buildURL } from '../utils/build-url';
import { parseJSONResponse } from '../utils/parse-json-response';

export const makeDownloadManyAutoExtractors =
	(context: APIContext) =>
	async (filter: AutoExtractorsFilter): Promise<string> => {
		const path = '/api/autoextractors/download';
		const url = buildURL(path, {
			...context,
			protocol: 'http',
			queryParams: {
				id: filter.ids,
			},
		});

		const req = buildHTTPRequestWithAuthFromContext(context);

		const raw = await context.fetch(url, { ...req, method: 'GET' });
		return await parseJSONResponse(raw, { expect: 'text' });
	};

export interface AutoExtractorsFilter {
	ids: Array<UUID>;
}
