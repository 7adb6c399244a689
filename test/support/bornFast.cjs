// Preloaded into a server process started with --allow-natives-syntax (`-r`, before its own code):
// for each request the process's HTTP server makes, one line on stderr telling how Node made its
// request and response, read before any listener has touched them. It hears them on Node's public
// diagnostics channel `http.server.request.start`, published just before the server's 'request' event.
// %HasFastProperties is V8's own answer to whether an object keeps its properties in its shape (fast)
// or in a hash table (dictionary mode). Plain CommonJS: node loads it without transforming it.
const { subscribe } = require('node:diagnostics_channel');
const { IncomingMessage, ServerResponse } = require('node:http');
const process = require('node:process');

/** The line's prefix; the rest is JSON. */
const PREFIX = 'born-with ';
// Written as a function from source, since the natives syntax is not JavaScript's (nor the linter's).
const hasFastProperties = new Function('object', 'return %HasFastProperties(object)');

subscribe('http.server.request.start', ({ request, response }) => {
  const born = {
    url: request.url,
    // Born with the app's prototypes, not Node's own, and still Node's objects.
    ownPrototypes:
      Object.getPrototypeOf(request) !== IncomingMessage.prototype && Object.getPrototypeOf(response) !== ServerResponse.prototype,
    instances: request instanceof IncomingMessage && response instanceof ServerResponse,
    fast: { request: hasFastProperties(request), response: hasFastProperties(response) },
  };
  process.stderr.write(`${PREFIX}${JSON.stringify(born)}\n`);
});
