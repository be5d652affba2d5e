import express from 'express';

/**
 * The baseline: express 5's hello world with its default settings, nothing else. The bench starts it as a child
 * process (`node dist/bench/bare-express.js`, PORT in the environment) so it never shares an event loop with the
 * load generator.
 */
const app = express();
app.get('/', (_req, res) => {
  res.send('Hello World!');
});

const server = app.listen(Number(process.env.PORT), '127.0.0.1', (err?: Error) => {
  if (err) {
    process.stderr.write(`bare express failed to listen: ${err.message}\n`);
    process.exit(1);
  }
});

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
