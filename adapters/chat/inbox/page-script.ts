/**
 * The page's script. Message `html` is rendered safe by the server and is the only value inserted
 * as HTML; every other value (names, addresses, button labels, footers) goes in through
 * `textContent` or a property, so it can never become markup.
 */
export const pageScript = String.raw`
(() => {
  'use strict';
  // The page is at <mount>/inbox, so the API is under it whatever the mount prefix is.
  const api = location.pathname.replace(/\/+$/, '') + '/api/';
  const select = document.getElementById('user');
  const feed = document.getElementById('feed');
  const statusLine = document.getElementById('status');
  let usersKey = '';
  let messagesKey = '';
  let shownEmail = '';
  let shownCount = 0;
  let clicking = false;
  /** Where focus was when a click was sent, to put it back after the redraw that shows the answer. */
  let answered = null;
  let statusTimer = 0;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // A lost connection stays on screen until it comes back; other notices fade.
  function showStatus(text, isError, persistent) {
    clearTimeout(statusTimer);
    statusLine.textContent = text;
    statusLine.classList.toggle('error', Boolean(isError));
    if (!persistent) {
      statusTimer = setTimeout(() => {
        statusLine.textContent = '';
      }, isError ? 6000 : 3000);
    }
  }

  // A request the server never answers would hold the poll, and every later refresh, for good.
  async function request(path, init) {
    const signal = AbortSignal.timeout(10000);
    const timedOut = () => new Error('no answer within 10 seconds');
    const response = await fetch(api + path, Object.assign({ cache: 'no-store', signal }, init)).catch((error) => {
      throw signal.aborted ? timedOut() : error;
    });
    const body = await response.json().catch(() => null);
    if (signal.aborted) throw timedOut();
    if (!response.ok) {
      throw new Error(body && typeof body.details === 'string' ? body.details : 'HTTP ' + response.status);
    }
    return body;
  }

  function wantedUser() {
    try {
      return decodeURIComponent(location.hash.slice(1));
    } catch {
      return '';
    }
  }

  /** The option value of an address, matched as the API matches addresses: case and spaces aside. */
  function optionOf(wanted) {
    const address = wanted.trim().toLowerCase();
    const option = [...select.options].find((candidate) => candidate.value.trim().toLowerCase() === address);
    return option && option.value ? option.value : null;
  }

  async function loadUsers() {
    const users = await request('users');
    const key = JSON.stringify(users);
    if (key === usersKey) return;
    usersKey = key;
    const wanted = select.value || wantedUser();
    const prompt = el('option', '', users.length > 0 ? 'Choose a user…' : 'No users yet');
    prompt.value = '';
    select.replaceChildren(prompt);
    for (const user of users) {
      const option = el('option', '', user.name + ' <' + user.email + '>');
      option.value = user.email;
      select.append(option);
    }
    const option = optionOf(wanted);
    if (option !== null) select.value = option;
  }

  /** The id of a message's text, which its buttons' group is described by. */
  const contentIdOf = (message) => 'text-' + message.id;

  function renderButtons(message) {
    const actions = el('div', 'actions');
    // Named for what it answers: a screen reader browsing buttons hears which message each is of.
    actions.setAttribute('role', 'group');
    actions.setAttribute('aria-label', 'Answer');
    actions.setAttribute('aria-describedby', contentIdOf(message));
    for (const button of message.buttons) {
      const node = el('button', button.value === message.selected ? 'selected' : '', button.text);
      node.type = 'button';
      node.value = button.value;
      node.setAttribute('aria-pressed', String(button.value === message.selected));
      node.addEventListener('click', () => sendClick(message, button, actions));
      actions.append(node);
    }
    return actions;
  }

  function badgeText(message, open) {
    if (message.kind !== 'interactive') return 'notification';
    if (open) return 'asks for an answer';
    return message.selected === null ? 'closed' : 'answered';
  }

  function renderMessage(message) {
    const card = el('article', 'msg');
    card.dataset.id = message.id;
    // Focusable by the script alone: where keyboard focus goes back after a redraw when its button is gone.
    card.tabIndex = -1;
    const avatar = el('div', 'avatar', 'N');
    avatar.setAttribute('aria-hidden', 'true');
    const bubble = el('div', 'bubble');
    const open = message.buttons.length > 0 && message.buttons.every((button) => !button.disabled);
    const meta = el('div', 'meta');
    meta.append(el('span', 'sender', 'Notifier'), el('span', 'badge ' + message.kind, badgeText(message, open)));
    const content = el('div', 'content');
    content.id = contentIdOf(message);
    // The only HTML insertion: the server renders it from markdown and escapes everything else.
    content.innerHTML = message.html;
    bubble.append(meta, content);
    if (open) bubble.append(renderButtons(message));
    if (message.selected !== null) {
      // A view may drop the buttons once answered; the value still says what was chosen.
      const chosen = message.buttons.find((button) => button.value === message.selected);
      const choice = el('p', 'choice', open ? 'Your answer (you can still change it): ' : 'Your answer: ');
      choice.append(el('strong', '', chosen ? chosen.text : message.selected));
      bubble.append(choice);
    }
    if (message.footer) bubble.append(el('p', 'footer', message.footer));
    card.append(avatar, bubble);
    return card;
  }

  /** Where keyboard focus is in the feed (its message, and the button's option value), or null. */
  function focusInFeed() {
    const active = document.activeElement;
    const card = active && feed.contains(active) ? active.closest('article') : null;
    if (!card) return null;
    return { id: card.dataset.id, button: active.tagName === 'BUTTON' ? active.value : null };
  }

  /** Puts keyboard focus back where it was before a redraw: the same button, or else its message. */
  function refocus(place) {
    if (!place) return;
    const card = [...feed.querySelectorAll('article')].find((node) => node.dataset.id === place.id);
    if (!card) return;
    // By value: two options may share a text, never a value.
    const button = [...card.querySelectorAll('button')].find((node) => node.value === place.button);
    (button && !button.disabled ? button : card).focus({ preventScroll: true });
  }

  function showEmpty(text) {
    feed.replaceChildren(el('p', 'empty', text));
  }

  async function loadMessages() {
    const email = select.value;
    if (!email) {
      messagesKey = '';
      showEmpty('Pick a user to see their messages.');
      return;
    }
    const messages = await request('messages?email=' + encodeURIComponent(email));
    // The user may have picked someone else while this answer was on its way.
    if (select.value !== email || clicking) return;
    const key = email + '\n' + JSON.stringify(messages);
    if (key === messagesKey) return;
    // Like a chat client: jump to the newest message when it arrives or when another user is picked.
    const grew = email !== shownEmail || messages.length > shownCount;
    // The feed is redrawn whole, so it is no live region: the status line says what arrived.
    const arrived = email === shownEmail ? messages.length - shownCount : 0;
    if (arrived > 0) showStatus(arrived === 1 ? 'A new message' : arrived + ' new messages', false);
    messagesKey = key;
    shownEmail = email;
    shownCount = messages.length;
    // A redraw replaces every message: a keyboard user keeps their place (a click just sent, too).
    const place = focusInFeed() ?? answered;
    answered = null;
    if (messages.length === 0) showEmpty('No messages for ' + email + ' yet.');
    else {
      feed.replaceChildren(...messages.map(renderMessage));
      refocus(place);
    }
    if (grew) window.scrollTo(0, document.body.scrollHeight);
  }

  async function sendClick(message, button, actions) {
    // Disabling the buttons takes focus from the one clicked: the redraw puts it back on its message.
    answered = focusInFeed();
    clicking = true;
    for (const node of actions.querySelectorAll('button')) node.disabled = true;
    try {
      await request('messages/' + encodeURIComponent(message.id) + '/click', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ value: button.value }),
      });
      showStatus('Answer sent: ' + button.text, false);
    } catch (error) {
      showStatus('Could not send the answer: ' + error.message, true);
    } finally {
      clicking = false;
      messagesKey = '';
    }
    await refresh();
  }

  async function refresh() {
    try {
      await loadUsers();
      await loadMessages();
      if (statusLine.dataset.offline) {
        delete statusLine.dataset.offline;
        showStatus('Connected again', false);
      }
    } catch (error) {
      statusLine.dataset.offline = 'true';
      showStatus('Cannot reach the inbox: ' + error.message, true, true);
    }
  }

  select.addEventListener('change', () => {
    const target = select.value ? '#' + encodeURIComponent(select.value) : location.pathname + location.search;
    history.replaceState(null, '', target);
    messagesKey = '';
    refresh();
  });

  // A link or bookmark to another user's inbox opened in this page: show that user.
  window.addEventListener('hashchange', () => {
    const wanted = optionOf(wantedUser());
    if (wanted === null || wanted === select.value) return;
    select.value = wanted;
    messagesKey = '';
    refresh();
  });

  async function poll() {
    await refresh();
    setTimeout(poll, 2000);
  }
  poll();
})();
`;
