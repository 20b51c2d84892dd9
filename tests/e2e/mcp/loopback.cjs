// Preloaded (`node --require`) into the reference server over Streamable HTTP by
// tests/e2e/mcp_everything_test.py: the server listens on PORT on every interface
// (`app.listen(PORT)`); this keeps it on 127.0.0.1, the only host the tests use.
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const byPort = typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port));
  if (byPort && typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  return listen.apply(this, args);
};
