/**
 * `npm start` logs every request (docs/local-stack.md: LOG_LEVEL defaults to DEBUG there). The
 * functions' logger (lib/runtime/logger.ts) reads LOG_LEVEL once, when it is imported, as on a
 * Lambda cold start; so infra/local/start.ts must set its default before anything imports the
 * logger: it loads the stack (which brings in the functions and the logger) only after that.
 */

type StartModule = typeof import('../../infra/local/start');

describe('npm start: LOG_LEVEL is set before the logger reads it', () => {
  const saved = process.env.LOG_LEVEL;
  afterEach(() => {
    if (saved === undefined) delete process.env.LOG_LEVEL;
    else process.env.LOG_LEVEL = saved;
    jest.resetModules();
  });

  /**
   * Imports start.ts afresh, recording LOG_LEVEL as it is when the stack's module and the logger's
   * are loaded (both replaced by stand-ins here), and when each is loaded at all.
   */
  function freshStart() {
    const loaded: { module: string; logLevel: string | undefined }[] = [];
    let start: StartModule | undefined;
    jest.isolateModules(() => {
      jest.doMock('../../infra/local/stack', () => {
        loaded.push({ module: 'stack', logLevel: process.env.LOG_LEVEL });
        return { startLocalStack: jest.fn() };
      });
      jest.doMock('../../lib/runtime/logger', () => {
        loaded.push({ module: 'logger', logLevel: process.env.LOG_LEVEL });
        return {};
      });
      start = require('../../infra/local/start') as StartModule;
    });
    return { start: start!, loaded };
  }

  it('importing start.ts loads neither the stack nor the logger', () => {
    delete process.env.LOG_LEVEL;
    const { loaded } = freshStart();
    expect(loaded).toEqual([]);
  });

  it('loads the stack with LOG_LEVEL DEBUG when it was unset: a success (logged at DEBUG) gets its line', async () => {
    delete process.env.LOG_LEVEL;
    const { start, loaded } = freshStart();
    const stack = await start.loadLocalStack(process.env);
    expect(stack.startLocalStack).toBeDefined();
    expect(loaded).toEqual([{ module: 'stack', logLevel: 'DEBUG' }]);
  });

  it('keeps a LOG_LEVEL set before npm start', async () => {
    process.env.LOG_LEVEL = 'WARN';
    const { start, loaded } = freshStart();
    await start.loadLocalStack(process.env);
    expect(loaded).toEqual([{ module: 'stack', logLevel: 'WARN' }]);
  });

  it('applyLocalDefaults sets DEBUG only where nothing is set', () => {
    const { start } = freshStart();
    const unset: NodeJS.ProcessEnv = {};
    start.applyLocalDefaults(unset);
    expect(unset.LOG_LEVEL).toBe('DEBUG');
    const set: NodeJS.ProcessEnv = { LOG_LEVEL: 'ERROR' };
    start.applyLocalDefaults(set);
    expect(set.LOG_LEVEL).toBe('ERROR');
  });
});
