import { createKoaApp } from './app.js';

const { app, notifier } = await createKoaApp();
notifier.start();
const port = Number(process.env.PORT ?? 3002);
app.listen(port, () => {
  console.log(
    `API at http://localhost:${port}/notifications/api/notify, inbox at http://localhost:${port}/notifications/inbox`,
  );
});
