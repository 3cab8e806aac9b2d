import * as v from 'valibot';
import { checkWebhookUrl, MAX_WEBHOOK_URL_LENGTH, parseAllowHosts } from '../domain/webhook-address';
import { about, documented, onFirstUse, WEBHOOK_EVENTS_TEXT, webhookDescription, webhookEvents } from './schemas';

/**
 * The bodies of POST /boards/{id}/webhooks and PATCH /webhooks/{id}: apart from lib/contract/schemas.ts
 * because their URL check (lib/domain/webhook-address.ts) builds its address blocks when loaded, so
 * only the two functions that take a URL bundle it (every function bundles schemas.ts).
 */

/**
 * `WEBHOOK_ALLOW_HOSTS` (lib/runtime/config.ts ENV.webhookAllowHosts: the contract layer imports no
 * configuration module, so the name is repeated here and a unit test holds the two equal): the hosts
 * for which `http` and non-public IP literals are allowed. Read once per container; the functions
 * whose bodies carry a URL call this at cold start, so a malformed value fails it, naming the entry.
 */
export const WEBHOOK_ALLOW_HOSTS_VARIABLE = 'WEBHOOK_ALLOW_HOSTS';
let allowHosts: ReadonlySet<string> | undefined;
export const webhookAllowHosts = () => (allowHosts ??= parseAllowHosts(process.env[WEBHOOK_ALLOW_HOSTS_VARIABLE]));

/**
 * A webhook URL (webhooks.md): absolute, `https` (or `http` for an allowed host), at most 2,048
 * characters, and not an IP literal of a non-public block (decimal, octal, hex and IPv4-mapped forms
 * included: lib/domain/webhook-address.ts). A refusal names the rule and never repeats the value;
 * the URL is stored as the WHATWG parser normalises it, the form that was checked.
 */
const webhookUrl = () =>
  v.pipe(
    v.string(),
    documented(
      v.rawCheck<string>(({ dataset, addIssue }) => {
        if (!dataset.typed) return;
        const verdict = checkWebhookUrl(dataset.value, webhookAllowHosts());
        if (!verdict.ok) addIssue({ message: verdict.detail });
      }),
      { format: 'uri', minLength: 1, maxLength: MAX_WEBHOOK_URL_LENGTH },
    ),
    v.transform((url: string) => {
      const verdict = checkWebhookUrl(url, webhookAllowHosts());
      return verdict.ok ? verdict.url : url;
    }),
    about(
      `Where deliveries are POSTed: an absolute \`https\` URL of at most ${MAX_WEBHOOK_URL_LENGTH} characters whose host is not an IP address of a private, loopback, link-local or otherwise non-public range (plain \`http\` and such hosts only for those in WEBHOOK_ALLOW_HOSTS, which deployed stacks leave unset). Stored as normalised by the WHATWG URL parser.`,
      'https://example.com/hooks/task-board',
    ),
  );

export const createWebhookBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    url: webhookUrl(),
    events: v.pipe(
      v.nullish(webhookEvents()),
      about(`${WEBHOOK_EVENTS_TEXT} Null or omitted: all.`, ['card.moved', 'card.created']),
    ),
    description: v.pipe(
      v.nullish(webhookDescription()),
      about('Up to 256 characters; null or omitted: none (null).', 'Mirror to the release tracker'),
    ),
  }),
);
export const updateWebhookBody = /* @__PURE__ */ onFirstUse(() =>
  v.object({
    url: v.pipe(v.nullish(webhookUrl()), about('The new URL (same rules as at creation); null or omitted: unchanged.')),
    events: v.pipe(
      v.nullish(webhookEvents()),
      about(`${WEBHOOK_EVENTS_TEXT} Null or omitted: unchanged; \`[]\`: all.`, ['card.moved']),
    ),
    description: v.pipe(
      v.nullish(webhookDescription()),
      about('The new description, up to 256 characters; null or omitted: unchanged (send "" to empty it).', 'Release tracker'),
    ),
    active: v.pipe(
      v.nullish(v.boolean()),
      about(
        'false: deliveries stop (pings still go); true: they resume with the events committed from now on, a webhook the service switched off (`disabled_reason` `failing` or `creator_not_owner`) is switched on afresh, and the caller becomes `created_by`, the owner it speaks for. Null or omitted: unchanged.',
        true,
      ),
    ),
  }),
);
