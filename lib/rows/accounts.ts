import {
  changePasswordBody,
  deleteAccountBody,
  forgotPasswordBody,
  resetPasswordBody,
  verifyEmailBody,
} from '../contract/schemas';
import type { RouteRow } from './row';

/**
 * Accounts (docs/accounts.md): the caller's account, address verification, password reset and
 * change, and deletion (finished by the stream's cleanup reader, `children.collect` in
 * lib/rows/events.ts). Each row lists exactly the Cognito actions that evaluate IAM (the
 * token-authorized and public Cognito APIs evaluate none).
 */

export const authMe = {
  id: 'auth.me',
  method: 'GET',
  path: '/auth/me',
  entry: 'functions/auth/me.ts',
  summary: "The caller's account: id, email, display name and whether the address is verified",
  access: { scope: 'user' },
  success: { status: 200, schema: 'account' },
  table: ['dynamodb:BatchGetItem'],
  cognito: [],
} satisfies RouteRow;

export const authVerifyEmailRequest = {
  id: 'auth.verify-email.request',
  method: 'POST',
  path: '/auth/verify-email/request',
  throttle: 'identity',
  entry: 'functions/auth/verify-email-request.ts',
  summary: "Mail a verification code to the caller's address",
  access: { scope: 'user' },
  success: { status: 202 },
  table: [],
  cognito: [], // GetUserAttributeVerificationCode: authorized by the access token, no IAM
} satisfies RouteRow;

export const authVerifyEmail = {
  id: 'auth.verify-email',
  method: 'POST',
  path: '/auth/verify-email',
  throttle: 'identity',
  entry: 'functions/auth/verify-email.ts',
  summary: "Verify the caller's address with the code mailed to it (400 invalid_code otherwise)",
  access: { scope: 'user' },
  body: verifyEmailBody,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'],
  cognito: [], // VerifyUserAttribute: authorized by the access token, no IAM
} satisfies RouteRow;

export const authPasswordForgot = {
  id: 'auth.password.forgot',
  method: 'POST',
  path: '/auth/password/forgot',
  throttle: 'identity',
  entry: 'functions/auth/password-forgot.ts',
  summary: 'Mail a password reset code to the address, if an account holds it (always 202)',
  access: { scope: 'public' },
  body: forgotPasswordBody,
  success: { status: 202 },
  table: ['dynamodb:BatchGetItem'],
  // ForgotPassword is a public Cognito API; an unproven address's attribute is set first.
  cognito: ['cognito-idp:AdminUpdateUserAttributes'],
} satisfies RouteRow;

export const authPasswordReset = {
  id: 'auth.password.reset',
  method: 'POST',
  path: '/auth/password/reset',
  throttle: 'identity',
  entry: 'functions/auth/password-reset.ts',
  summary: 'Set a new password with the mailed code; verifies the address and revokes every refresh token',
  access: { scope: 'public' },
  body: resetPasswordBody,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'],
  cognito: ['cognito-idp:AdminUserGlobalSignOut'], // ConfirmForgotPassword is public
} satisfies RouteRow;

export const authPasswordChange = {
  id: 'auth.password.change',
  method: 'POST',
  path: '/auth/password',
  throttle: 'identity',
  entry: 'functions/auth/password-change.ts',
  summary: "Change the caller's password (403 wrong_password); revokes every refresh token, the caller's too",
  access: { scope: 'user' },
  body: changePasswordBody,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem'],
  errors: [403],
  cognito: ['cognito-idp:AdminUserGlobalSignOut'], // InitiateAuth and ChangePassword evaluate no IAM
} satisfies RouteRow;

export const authAccountDelete = {
  id: 'auth.account.delete',
  method: 'DELETE',
  path: '/auth/account',
  throttle: 'identity',
  entry: 'functions/auth/account-delete.ts',
  summary: "Delete the caller's account: it leaves every board, its boards owned alone are deleted",
  access: { scope: 'user' },
  body: deleteAccountBody,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem'],
  errors: [403],
  metric: 'AccountDeleted',
  cognito: ['cognito-idp:AdminDeleteUser'],
} satisfies RouteRow;
