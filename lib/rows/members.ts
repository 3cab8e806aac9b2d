import { addMemberBody, changeRoleBody, idParams, memberParams } from '../contract/schemas';
import type { RouteRow } from './row';
import type { RouteText } from './text';

/** A board's members: added and managed by its owners. */

export const membersAdd = {
  id: 'members.add',
  method: 'POST',
  path: '/boards/{id}/members',
  entry: 'functions/members/add.ts',
  logGroup: 'root',
  summary: 'Add a registered user to a board (owners only)',
  access: { scope: 'board', via: 'board', role: 'owner' },
  params: idParams,
  body: addMemberBody,
  success: { status: 201, schema: 'member' },
  idempotent: 'caller',
  table: ['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
  errors: [409],
  metric: 'MemberAdded',
  cognito: [],
} satisfies RouteRow;

export const membersAddText = {
  of: membersAdd,
  tag: 'members',
  description:
    'Adds a registered user, found by email, with the role given (`member` by default). Owners only. 404 when no user has that email, 409 when they are already a member.',
} satisfies RouteText;

export const membersList = {
  id: 'members.list',
  method: 'GET',
  path: '/boards/{id}/members',
  entry: 'functions/members/list.ts',
  logGroup: 'root',
  summary: "List a board's members in the order they joined",
  access: { scope: 'board', via: 'board', role: 'member' },
  params: idParams,
  success: { status: 200, schema: 'memberList' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:Query'],
  cognito: [],
} satisfies RouteRow;

export const membersListText = {
  of: membersList,
  tag: 'members',
  description: "The board's members in the order they joined.",
} satisfies RouteText;

export const membersUpdate = {
  id: 'members.update',
  method: 'PATCH',
  path: '/boards/{id}/members/{user_id}',
  entry: 'functions/members/update.ts',
  logGroup: 'root',
  summary: "Change a member's role (owners only)",
  access: { scope: 'board', via: 'board', role: 'owner' },
  params: memberParams,
  body: changeRoleBody,
  success: { status: 200, schema: 'member' },
  table: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  errors: [409],
  cognito: [],
} satisfies RouteRow;

export const membersUpdateText = {
  of: membersUpdate,
  tag: 'members',
  description: "Sets a member's role. Owners only; demoting the last owner is 409 (a board always keeps an owner).",
} satisfies RouteText;

export const membersRemove = {
  id: 'members.remove',
  method: 'DELETE',
  path: '/boards/{id}/members/{user_id}',
  entry: 'functions/members/remove.ts',
  logGroup: 'root',
  summary: 'Remove a member (owners), or leave the board (members)',
  access: { scope: 'board', via: 'board', role: 'member' },
  params: memberParams,
  success: { status: 204 },
  table: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
  errors: [409],
  cognito: [],
} satisfies RouteRow;

export const membersRemoveText = {
  of: membersRemove,
  tag: 'members',
  description:
    'Owners remove anyone; a member may remove only themselves (leave). Removing the last owner is 409. The removed member loses access at once, live sockets included.',
} satisfies RouteText;
