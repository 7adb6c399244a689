/**
 * npm run webhooks -- <command>: the operator's view of webhook endpoints and deliveries
 * (docs/webhooks.md, Operating). The database is DATABASE_URL's, or without it the embedded one
 * of a running `npm start`. Never prints a secret.
 */
import { userInfo } from 'node:os';
import type { Sql } from '../../src/store/database/db';
import {
  type DeliveryListing,
  type EndpointListing,
  WebhookCommandError,
  listAllEndpoints,
  listDeliveries,
  replayEvent,
  setEndpointEnabled,
} from '../../src/store/webhooks/admin';
import { type CommandOptions, UsageError, runOperatorTool, table } from '../lib/command';
import { runTool } from '../lib/tool';

const USAGE = `npm run webhooks -- <command> [options]

  list                      every client's endpoints: id, client, URL, state, deliveries pending and failed, last attempt
  disable ID [--reason TEXT]
                            no more deliveries to it (its owner sees the reason); those waiting stay queued
  enable ID                 deliveries resume, those waiting included
  replay EVENT_ID [--endpoint ID]
                            send an event again, with a fresh timestamp and signature (the same webhook-id)
  deliveries ID [--limit N] an endpoint's last deliveries (default 50): state, attempts, last outcome

  Every command: --json, --timeout SECONDS (30: past it the command ends, and what it changed, if any, is not known).
  Database: DATABASE_URL, or the embedded one of npm start.`;

const endpointsTable = (endpoints: EndpointListing[]) =>
  table([
    ['ENDPOINT', 'CLIENT', 'URL', 'STATE', 'PENDING', 'FAILED', 'LAST ATTEMPT', 'REASON'],
    ...endpoints.map((e) => [
      e.id,
      e.clientId,
      e.url,
      e.status,
      String(e.pending),
      String(e.failed),
      e.lastAttempt ?? '',
      e.disabledReason ?? '',
    ]),
  ]);

const deliveriesTable = (deliveries: DeliveryListing[]) =>
  table([
    ['EVENT', 'STATE', 'ATTEMPTS', 'DUE', 'FINISHED', 'LAST OUTCOME'],
    ...deliveries.map((d) => [
      d.eventId,
      d.state,
      String(d.attempts),
      d.state === 'pending' ? d.dueAt.toISOString() : '',
      d.finishedAt?.toISOString() ?? '',
      d.lastOutcome === null ? '' : `${d.lastOutcome}${d.lastStatus === null ? '' : ` ${d.lastStatus}`}`,
    ]),
  ]);

/** The command, its arguments checked before any database is opened: what to run on it. */
function commandOf(command: string, positional: string[], o: CommandOptions): (sql: Sql) => Promise<string> {
  const json = o.json === true;
  const one = (what: string) => {
    if (positional.length !== 1) throw new UsageError(`${command} takes one ${what}`);
    return positional[0] as string;
  };
  if (command === 'list') {
    if (positional.length) throw new UsageError('list takes no argument');
    return async (sql) => {
      const endpoints = await listAllEndpoints(sql);
      if (json) return JSON.stringify(endpoints);
      return endpoints.length ? endpointsTable(endpoints) : 'No webhook endpoints yet (a client makes them: POST /v1/webhook-endpoints).';
    };
  }
  if (command === 'disable' || command === 'enable') {
    const id = one('endpoint id');
    const reason = `Disabled by an operator (${userInfo().username})${o.reason ? `: ${String(o.reason)}` : ''}`.slice(0, 1000);
    return async (sql) => {
      await setEndpointEnabled(sql, id, command === 'enable', reason);
      return json ? JSON.stringify({ id, status: command === 'enable' ? 'enabled' : 'disabled' }) : `${id} ${command}d.`;
    };
  }
  if (command === 'replay') {
    const eventId = one('event id');
    return async (sql) => {
      const endpoints = await replayEvent(sql, eventId, o.endpoint as string | undefined);
      if (json) return JSON.stringify({ eventId, endpoints });
      return endpoints.length ? `${eventId} queued again for ${endpoints.join(', ')}.` : `${eventId} has no delivery to send again.`;
    };
  }
  if (command === 'deliveries') {
    const id = one('endpoint id');
    const limit = Number(o.limit ?? '50');
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be an integer from 1 to 1000');
    return async (sql) => {
      const deliveries = await listDeliveries(sql, id, limit);
      if (json) return JSON.stringify(deliveries);
      return deliveries.length ? deliveriesTable(deliveries) : `${id} has no deliveries.`;
    };
  }
  throw new UsageError(`Unknown command ${JSON.stringify(command)}`);
}

runTool('webhooks failed', () =>
  runOperatorTool(
    {
      usage: USAGE,
      options: {
        reason: { type: 'string' },
        endpoint: { type: 'string' },
        limit: { type: 'string' },
        json: { type: 'boolean' },
      },
      commandOf,
      isCommandError: (err): err is Error => err instanceof WebhookCommandError,
    },
    process.argv.slice(2),
  ),
);
