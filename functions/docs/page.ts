import { docsPage } from '../../lib/http/docs';
import { publicRoute } from '../../lib/http/public-route';
import { docs } from '../../lib/rows/docs';

/** The API reference page: Swagger UI on GET /openapi.json, its files from GET /docs/{file}. No token. */
export const handler = publicRoute(docs, async () => docsPage());
