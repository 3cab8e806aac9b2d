import type { PoolTriggerRow } from './row';

/**
 * The functions the user pool invokes. The mail one gives each message that carries a code the
 * subject of its purpose (lib/auth/messages.ts); it reads nothing and calls nothing, so it is
 * granted nothing and has no pool settings in its environment (a trigger that names its pool
 * would make the pool and the function depend on each other).
 */
export const authMessage = {
  id: 'auth.message',
  entry: 'functions/auth/message.ts',
  summary: "Names each code message's purpose in its subject: address verification or password reset",
  trigger: 'CustomMessage',
  table: [],
  cognito: [],
  // Cognito waits 5 s for a trigger, and a longer run would only be a failed message.
  timeoutSeconds: 5,
} satisfies PoolTriggerRow;
