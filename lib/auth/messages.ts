/**
 * The pool's mail, by purpose: the subject and text of each message that carries a code, shared
 * by the CustomMessage trigger (functions/auth/message.ts), which sets them on AWS and, through
 * the local Lambda stand-in, on the local stack. Without the trigger Cognito has one template
 * (lib/auth/pool.ts `verificationMessage`) for every code it mails, so an address verification
 * and a password reset would arrive under the same subject.
 */
const SERVICE_NAME = 'Task board';

export interface MailText {
  emailSubject: string;
  /** The body, with `code` where the code goes (Cognito's code parameter, `{####}`). */
  emailMessage: (code: string) => string;
}

export const mailTexts = {
  /** The code of POST /auth/verify-email, requested by POST /auth/verify-email/request. */
  addressVerification: {
    emailSubject: `Verify your email address for ${SERVICE_NAME}`,
    emailMessage: (code) =>
      `Your code to verify this email address for ${SERVICE_NAME} is ${code}. If you did not ask for it, you can ignore this message.`,
  },
  /** The code of POST /auth/password/reset, requested by POST /auth/password/forgot. */
  passwordReset: {
    emailSubject: `Reset your ${SERVICE_NAME} password`,
    emailMessage: (code) =>
      `Your code to reset your ${SERVICE_NAME} password is ${code}. If you did not ask for a reset, you can ignore this message: your password stays as it is.`,
  },
} satisfies Record<string, MailText>;

/**
 * Which text each of Cognito's CustomMessage trigger sources gets: an attribute verification code
 * (requested, or sent after an address change) names the verification, a forgotten password's
 * code the reset. Any other source keeps Cognito's own message.
 */
const TEXT_OF_SOURCE: Record<string, MailText> = {
  CustomMessage_VerifyUserAttribute: mailTexts.addressVerification,
  CustomMessage_UpdateUserAttribute: mailTexts.addressVerification,
  CustomMessage_ForgotPassword: mailTexts.passwordReset,
};

/** The subject and body for a trigger source, with Cognito's code parameter in the body; undefined: Cognito's default. */
export function mailFor(
  triggerSource: string,
  codeParameter: string,
): { emailSubject: string; emailMessage: string } | undefined {
  const text = Object.hasOwn(TEXT_OF_SOURCE, triggerSource) ? TEXT_OF_SOURCE[triggerSource] : undefined;
  return text && { emailSubject: text.emailSubject, emailMessage: text.emailMessage(codeParameter) };
}
