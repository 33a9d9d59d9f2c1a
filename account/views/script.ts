/**
 * The pages' script, an enhancement only: every form works without it. It shows times in the
 * viewer's time zone, creates a key through the JSON API so that the key appears once in a modal
 * dialog (never in a page a reload would post again), copies it, and asks before a revocation. It
 * inserts no markup: text goes in through `textContent` and `value`.
 */
export const pageScript = `
(() => {
  'use strict';
  const format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  for (const time of document.querySelectorAll('time[datetime]')) {
    const date = new Date(time.getAttribute('datetime'));
    if (!Number.isNaN(date.getTime())) time.textContent = format.format(date);
  }

  const canDialog = typeof HTMLDialogElement === 'function' && 'showModal' in HTMLDialogElement.prototype;

  const keyDialog = document.getElementById('new-key-dialog');
  const keyValue = document.getElementById('new-key-value');
  const copyButton = document.getElementById('copy-key');
  const copyStatus = document.getElementById('copy-status');
  if (copyButton && keyValue) {
    copyButton.hidden = false;
    copyButton.addEventListener('click', async () => {
      let copied = false;
      try {
        await navigator.clipboard.writeText(keyValue.value);
        copied = true;
      } catch {
        // No Clipboard API outside secure contexts: copy the selection the old way.
        keyValue.select();
        copied = document.execCommand('copy');
      }
      copyStatus.textContent = copied ? 'Copied to the clipboard.' : 'Select the key and copy it yourself.';
    });
  }

  const createForm = document.getElementById('create-key');
  const createError = document.getElementById('create-error');
  if (createForm && keyDialog && canDialog) {
    keyDialog.addEventListener('close', () => location.assign(location.pathname));
    createForm.addEventListener('submit', async (event) => {
      event.preventDefault();
      const button = createForm.querySelector('button[type="submit"]');
      button.disabled = true;
      createError.textContent = '';
      try {
        const response = await fetch(createForm.dataset.api, {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'content-type': 'application/json', 'x-csrf-token': createForm.elements.csrf.value },
          body: JSON.stringify({ label: createForm.elements.label.value }),
        });
        // The session ended while the page was open: the form's own post leads to the sign-in page
        // and back here, as it does without the script.
        if (response.status === 401) {
          createForm.submit();
          return;
        }
        const answer = await response.json().catch(() => ({}));
        if (!response.ok) {
          createError.textContent =
            answer.details === 'Missing or invalid CSRF token'
              ? 'This page is out of date (you signed in or out elsewhere). Reload it and try again.'
              : answer.details || 'The key could not be created.';
          // The button is disabled while the call runs, which drops the focus: back to the field to mend.
          createForm.elements.label.focus();
          return;
        }
        keyValue.value = answer.api_key;
        document.getElementById('new-key-label').textContent = answer.key.label;
        copyStatus.textContent = '';
        keyDialog.showModal();
        keyValue.focus();
        keyValue.select();
      } catch {
        createError.textContent = 'The service could not be reached. Try again.';
      } finally {
        button.disabled = false;
        if (document.activeElement === document.body) button.focus();
      }
    });
  }

  const confirmDialog = document.getElementById('confirm-dialog');
  if (confirmDialog && canDialog) {
    let pending = null;
    document.getElementById('confirm-yes').addEventListener('click', () => {
      if (!pending) return;
      const confirmed = document.createElement('input');
      confirmed.type = 'hidden';
      confirmed.name = 'confirm';
      confirmed.value = 'yes';
      pending.append(confirmed);
      pending.submit();
    });
    for (const form of document.querySelectorAll('form[data-confirm]')) {
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        pending = form;
        document.getElementById('confirm-text').textContent = form.dataset.confirm;
        confirmDialog.showModal();
      });
    }
  }
})();
`;
