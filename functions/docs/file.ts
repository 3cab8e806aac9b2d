import { docsFile } from '../../lib/http/docs';
import { publicRoute } from '../../lib/http/public-route';
import { docsFile as docsFileRow } from '../../lib/rows/docs';

/** A script, style or image of the API reference page, from the allow-list (lib/contract/docs-assets.ts). No token. */
export const handler = publicRoute(docsFileRow, async ({ params, event }) =>
  docsFile(params.file, event.queryStringParameters?.v),
);
