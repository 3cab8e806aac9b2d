import { Logger } from '@aws-lambda-powertools/logger';

/**
 * Structured JSON logs (Powertools: log level from POWERTOOLS_LOG_LEVEL, sampling, Lambda
 * context fields) rather than a hand-rolled console wrapper. Keys are passed per call, never
 * appended globally, because the local server runs many requests in one process.
 */
export const logger = new Logger({ serviceName: 'task-board' });
