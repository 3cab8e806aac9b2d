import type { Context, CustomMessageTriggerEvent } from 'aws-lambda';
import { mailFor } from '../../lib/auth/messages';
import { authMessage } from '../../lib/rows/auth';
import { beginInvocation, logger } from '../../lib/runtime/logger';
import { countColdStart } from '../../lib/runtime/metrics';

/**
 * The pool's CustomMessage trigger (lib/rows/auth.ts): the subject and text of an address
 * verification or a password reset code, by the event's trigger source; any other source goes
 * back as it came, which leaves Cognito's own message. It counts its cold starts and logs the
 * source, never the address or the user, like every other function (the dashboard shows both).
 */
export const handler = async (event: CustomMessageTriggerEvent, context?: Context): Promise<CustomMessageTriggerEvent> => {
  beginInvocation(context);
  countColdStart(authMessage.entry);
  const mail = mailFor(event.triggerSource, event.request.codeParameter);
  if (mail) event.response = { ...event.response, ...mail };
  logger.debug('pool message', { source: event.triggerSource, named: mail !== undefined });
  return event;
};
