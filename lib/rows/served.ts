// Written by `npm run openapi` (scripts/write-openapi.ts) from the route table (lib/routes.ts); do not edit.

/**
 * Each path the HTTP rows serve, with its methods: all the catch-all (functions/fallback.ts) needs
 * of the table to tell 405 from 404, without the rows and their schemas in its bundle.
 */
export const servedMethods: Record<string, readonly string[]> = {
  '/asyncapi.json': ['GET'],
  '/auth/account': ['DELETE'],
  '/auth/login': ['POST'],
  '/auth/logout': ['POST'],
  '/auth/me': ['GET'],
  '/auth/password': ['POST'],
  '/auth/password/forgot': ['POST'],
  '/auth/password/reset': ['POST'],
  '/auth/refresh': ['POST'],
  '/auth/register': ['POST'],
  '/auth/verify-email': ['POST'],
  '/auth/verify-email/request': ['POST'],
  '/boards': ['GET', 'POST'],
  '/boards/{id}': ['GET', 'PATCH', 'DELETE'],
  '/boards/{id}/columns': ['POST'],
  '/boards/{id}/events': ['GET'],
  '/boards/{id}/labels': ['GET', 'POST'],
  '/boards/{id}/members': ['GET', 'POST'],
  '/boards/{id}/members/{user_id}': ['PATCH', 'DELETE'],
  '/boards/{id}/webhooks': ['GET', 'POST'],
  '/cards/{id}': ['GET', 'PATCH', 'DELETE'],
  '/cards/{id}/labels/{label_id}': ['PUT', 'DELETE'],
  '/cards/{id}/move': ['PATCH'],
  '/columns/{id}': ['GET', 'PATCH', 'DELETE'],
  '/columns/{id}/cards': ['POST'],
  '/columns/{id}/move': ['PATCH'],
  '/docs': ['GET'],
  '/docs/{file}': ['GET'],
  '/health': ['GET'],
  '/labels/{id}': ['PATCH', 'DELETE'],
  '/openapi.json': ['GET'],
  '/realtime/tickets': ['POST'],
  '/webhooks/{id}': ['GET', 'PATCH', 'DELETE'],
  '/webhooks/{id}/deliveries': ['GET'],
  '/webhooks/{id}/ping': ['POST'],
  '/webhooks/{id}/rotate-secret': ['POST'],
};
