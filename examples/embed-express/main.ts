import { createExpressApp } from './app.js';

const { app, notifier } = await createExpressApp();
notifier.start();
const port = Number(process.env.PORT ?? 3001);
app.listen(port, () => {
  console.log(
    `API at http://localhost:${port}/notifications/api/notify, inbox at http://localhost:${port}/notifications/inbox`,
  );
});
