import { loginBody, refreshBody, registerBody } from '../contract/schemas';
import type { RouteRow } from './row';

/** Accounts and tokens: public rows (the body holds the credential), throttled at the identity rate. */

export const authRegister = {
  id: 'auth.register',
  method: 'POST',
  path: '/auth/register',
  throttle: 'identity',
  entry: 'functions/auth/register.ts',
  summary: 'Register a user and receive an access token',
  access: { scope: 'public' },
  body: registerBody,
  success: { status: 201, schema: 'tokenResponse' },
  idempotent: 'account',
  // BatchGetItem and DeleteItem only when the address is held by an account whose identity is gone.
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem'],
  errors: [409],
  metric: 'UserRegistered',
  cognito: [
    'cognito-idp:AdminCreateUser',
    'cognito-idp:AdminSetUserPassword',
    'cognito-idp:AdminDeleteUser',
    'cognito-idp:AdminGetUser',
    'cognito-idp:AdminInitiateAuth',
    'cognito-idp:DescribeUserPoolClient',
  ],
} satisfies RouteRow;

export const authLogin = {
  id: 'auth.login',
  method: 'POST',
  path: '/auth/login',
  throttle: 'identity',
  entry: 'functions/auth/login.ts',
  summary: 'Log in with email and password',
  access: { scope: 'public' },
  body: loginBody,
  success: { status: 200, schema: 'tokenResponse' },
  table: [],
  errors: [401],
  cognito: ['cognito-idp:AdminInitiateAuth', 'cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;

export const authRefresh = {
  id: 'auth.refresh',
  method: 'POST',
  path: '/auth/refresh',
  throttle: 'identity',
  entry: 'functions/auth/refresh.ts',
  summary: 'Exchange a refresh token for a new access token',
  // No bearer token: the refresh token in the body is the credential (as the password is for login).
  access: { scope: 'public' },
  body: refreshBody,
  success: { status: 200, schema: 'tokenResponse' },
  table: [],
  errors: [401],
  // GetTokensFromRefreshToken evaluates no IAM; the client secret it takes is read from the pool.
  cognito: ['cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;

export const authLogout = {
  id: 'auth.logout',
  method: 'POST',
  path: '/auth/logout',
  throttle: 'identity',
  entry: 'functions/auth/logout.ts',
  summary: 'Log out: revoke a refresh token so that it can no longer be refreshed',
  access: { scope: 'public' },
  body: refreshBody,
  success: { status: 204 },
  table: [],
  errors: [401],
  // RevokeToken evaluates no IAM; the client secret it takes is read from the pool.
  cognito: ['cognito-idp:DescribeUserPoolClient'],
} satisfies RouteRow;
