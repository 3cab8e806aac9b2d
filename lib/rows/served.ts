// Written by `npm run openapi` (scripts/write-openapi.ts) from the route table (lib/routes.ts); do not edit.

/**
 * Each path the HTTP rows serve, with its methods: all the catch-all (functions/fallback.ts) needs
 * of the table to tell 405 from 404, without the rows and their schemas in its bundle.
 */
export const servedMethods: Record<string, readonly string[]> = {
  '/health': ['GET'],
  '/openapi.json': ['GET'],
  '/asyncapi.json': ['GET'],
  '/docs': ['GET'],
  '/docs/{file}': ['GET'],
  '/auth/register': ['POST'],
  '/auth/login': ['POST'],
  '/auth/refresh': ['POST'],
  '/auth/logout': ['POST'],
  '/auth/me': ['GET'],
  '/auth/verify-email/request': ['POST'],
  '/auth/verify-email': ['POST'],
  '/auth/password/forgot': ['POST'],
  '/auth/password/reset': ['POST'],
  '/auth/password': ['POST'],
  '/auth/account': ['DELETE'],
  '/boards': ['GET', 'POST'],
  '/boards/{id}': ['GET', 'PATCH', 'DELETE'],
  '/boards/{id}/events': ['GET'],
  '/boards/{id}/columns': ['POST'],
  '/columns/{id}/cards': ['POST'],
  '/cards/{id}': ['GET', 'PATCH', 'DELETE'],
  '/cards/{id}/move': ['PATCH'],
  '/columns/{id}': ['GET', 'PATCH', 'DELETE'],
  '/columns/{id}/move': ['PATCH'],
  '/boards/{id}/members': ['POST', 'GET'],
  '/boards/{id}/members/{user_id}': ['PATCH', 'DELETE'],
  '/boards/{id}/labels': ['POST', 'GET'],
  '/labels/{id}': ['PATCH', 'DELETE'],
  '/cards/{id}/labels/{label_id}': ['PUT', 'DELETE'],
  '/realtime/tickets': ['POST'],
  '/boards/{id}/webhooks': ['POST', 'GET'],
  '/webhooks/{id}': ['GET', 'PATCH', 'DELETE'],
  '/webhooks/{id}/rotate-secret': ['POST'],
  '/webhooks/{id}/ping': ['POST'],
  '/webhooks/{id}/deliveries': ['GET'],
};
