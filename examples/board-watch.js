/**
 * A live copy of one board in the browser that never loses a change (docs/asyncapi.yaml,
 * "Catching up"): read the tree once, watch the board, and after every reconnect read what was
 * missed from the board's log (GET /boards/{id}/events?after=<seq>) before applying live events
 * again, in `seq` order, each once. No library and no build step: a plain script that defines
 * `watchBoard`; examples/browser-watch.html shows it working against the local stack.
 *
 *   const watcher = watchBoard({
 *     api: 'http://127.0.0.1:3000',
 *     boardId,
 *     login: async () => token,            // called on every (re)connect: return a valid access token
 *     onChange: (board, why) => render(board), // `why`: the event applied, or {type: 'board.tree'}
 *     onNote: (text) => console.log(text),  // what happens to the connection, for a person
 *   });
 *   watcher.stop();
 *
 * `board` is GET /boards/{id} kept up to date: its `seq` is the last change applied; it is null
 * once the board is deleted. Two things of it no `card.updated` tells, so `applyToTree` derives
 * them as the server does: a card's `comment_count` (+1 on `comment.created`, −1 on
 * `comment.deleted`) and its `assignee_ids` after `member.removed` (the user leaves every card).
 * `card.archived` takes a card out of its column; `card.restored` puts it back.
 */
function watchBoard({ api, boardId, login, onChange = () => {}, onNote = () => {} }) {
  let token;
  let board; // the copy: GET /boards/{id}, then every event applied to it
  let last = 0; // the seq of the last change applied
  let etag; // the tree's entity tag when it was last read whole: If-None-Match re-reads it for one item
  const held = new Map(); // events received ahead of a gap (or while catching up), by seq
  let catchingUp = false;
  let socket;
  let stopped = false;

  const get = async (path, headers = {}) => {
    const response = await fetch(api + path, { headers: { authorization: `Bearer ${token}`, ...headers } });
    const body = response.status === 304 ? undefined : await response.json();
    return { status: response.status, etag: response.headers.get('etag'), body };
  };

  /** The tree, as the server has it now: every change up to its seq is in it. */
  async function readTree() {
    const { status, body, etag: tag } = await get(`/boards/${boardId}`);
    if (status !== 200) throw new Error(`GET /boards/${boardId} answered ${status}: ${body.detail}`);
    board = body;
    etag = tag;
    last = body.seq;
    for (const seq of held.keys()) if (seq <= last) held.delete(seq);
    onChange(board, { type: 'board.tree', seq: last });
  }

  /**
   * While no socket is open, the copy is kept current by asking whether the tree changed since it
   * was read (If-None-Match): 304 when it did not, for the price of the membership check and the
   * board's own item; the whole tree only when it did.
   */
  async function refreshTree() {
    if (!board || !etag || !token) return;
    const { status, body, etag: tag } = await get(`/boards/${boardId}`, { 'if-none-match': etag });
    if (status !== 200 || body.seq <= last) return; // 304: unchanged
    board = body;
    etag = tag;
    last = body.seq;
    for (const seq of held.keys()) if (seq <= last) held.delete(seq);
    onChange(board, { type: 'board.tree', seq: last });
  }

  async function connect() {
    if (stopped) return;
    try {
      token = await login();
      if (!board) await readTree();
      const ticketAnswer = await fetch(`${api}/realtime/tickets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      if (ticketAnswer.status !== 201) throw new Error(`POST /realtime/tickets answered ${ticketAnswer.status}`);
      const { ticket, url } = await ticketAnswer.json();
      openSocket(`${url}?ticket=${encodeURIComponent(ticket)}`);
    } catch (error) {
      onNote(`could not connect (${error.message}); trying again in 5 s`);
      await refreshTree().catch(() => {});
      setTimeout(connect, 5000);
    }
  }

  function openSocket(address) {
    const ws = new WebSocket(address);
    socket = ws;
    const pinger = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send('{"action":"ping"}'), 5 * 60 * 1000);
    ws.onopen = () => ws.send(JSON.stringify({ action: 'watch', board_id: boardId }));
    ws.onmessage = ({ data }) => {
      const frame = JSON.parse(data);
      if (frame.type === 'watch.ack') {
        onNote(`watching; the board is at seq ${frame.seq}, this copy at ${last}`);
        // Every event above frame.seq reaches this socket; what lies between is in the log.
        if (frame.seq > last) catchUp();
      } else if (typeof frame.seq === 'number') {
        if (frame.seq > last) held.set(frame.seq, frame); // else: a repeat, or already read from the log
        applyHeld();
      } else if (frame.type === 'access.revoked') {
        onNote('you are no longer a member of this board');
        stop();
      } else if (frame.type === 'error' && (frame.code === 'forbidden' || frame.code === 'bad_request')) {
        onNote(`watch refused: ${frame.detail}`);
        stop();
      } else if (frame.type === 'error') {
        ws.close(); // storage busy: reconnect and watch again
      }
      // token.expired: the server closes the socket; onclose logs in again and reconnects.
    };
    ws.onclose = () => {
      clearInterval(pinger);
      if (stopped) return;
      onNote('socket closed; reconnecting');
      setTimeout(connect, 1000);
    };
  }

  /** Applies the held events that follow `last`, in order; a gap is read from the log. */
  function applyHeld() {
    if (catchingUp) return;
    for (let next = held.get(last + 1); next && !stopped; next = held.get(last + 1)) apply(next);
    if (held.size > 0 && !stopped) catchUp();
  }

  /** Reads the log after `last` page by page up to the board's latest seq; 410: the tree again. */
  async function catchUp() {
    if (catchingUp) return;
    catchingUp = true;
    const from = last;
    try {
      for (;;) {
        const { status, body } = await get(`/boards/${boardId}/events?after=${last}&limit=1000`);
        if (status === 410) {
          onNote(`the changes after seq ${last} are no longer kept: reading the board again`);
          await readTree();
          break;
        }
        if (status !== 200) throw new Error(`the board's events answered ${status}: ${body.detail}`);
        for (const event of body.events) if (event.seq === last + 1 && !stopped) apply(event);
        if (stopped || body.events.length === 0 || last >= body.latest_seq) break;
      }
      if (last > from) onNote(`caught up: ${last - from} missed change(s) applied, now at seq ${last}`);
    } catch (error) {
      onNote(`could not catch up (${error.message}); reconnecting`);
      socket?.close();
    } finally {
      catchingUp = false;
    }
    applyHeld();
  }

  function apply(event) {
    held.delete(event.seq);
    last = event.seq;
    if (event.type === 'board.deleted') {
      board = null;
      onChange(null, event);
      stop();
      return;
    }
    applyToTree(board, event);
    board.seq = last;
    onChange(board, event);
  }

  function stop() {
    stopped = true;
    socket?.close();
  }

  connect();
  return { stop, board: () => board };
}

/** One event applied to a tree of GET /boards/{id}: the same data and order as the server's. */
function applyToTree(board, event) {
  const byPosition = (a, b) => a.position - b.position || compare(a.created_at ?? '', b.created_at ?? '') || compare(a.id, b.id);
  const compare = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  const byLabelName = (a, b) => compare(a.name.toLowerCase(), b.name.toLowerCase()) || compare(a.id, b.id);
  const removeCard = (id) => {
    for (const column of board.columns) column.cards = column.cards.filter((card) => card.id !== id);
  };
  /** Every card of the tree: an archived card is in none of its columns. */
  const eachCard = (visit) => {
    for (const column of board.columns) for (const card of column.cards) visit(card);
  };
  const putCard = (card) => {
    removeCard(card.id);
    // An archived card leaves its column (a card.updated of one, edited while archived, too).
    if (card.archived_at) return;
    const column = board.columns.find((c) => c.id === card.column_id);
    if (!column) return;
    column.cards.push(card);
    column.cards.sort(byPosition);
  };
  const putColumn = (column) => {
    const cards = board.columns.find((c) => c.id === column.id)?.cards ?? [];
    board.columns = board.columns.filter((c) => c.id !== column.id).concat({ ...column, cards });
    board.columns.sort(byPosition);
  };
  /** A card's label_ids hold live labels only, in label order. */
  const relabel = () => {
    const order = new Map(board.labels.map((label, index) => [label.id, index]));
    for (const column of board.columns) {
      for (const card of column.cards) {
        card.label_ids = card.label_ids.filter((id) => order.has(id)).sort((a, b) => order.get(a) - order.get(b));
      }
    }
  };
  switch (event.type) {
    case 'card.created':
    case 'card.updated':
    case 'card.moved':
    case 'card.restored': // back in its column, at its new position
      putCard(event.card);
      break;
    case 'card.deleted':
      removeCard(event.card_id);
      break;
    case 'card.archived':
      removeCard(event.card.id);
      break;
    // No card.updated is sent for a card's comment_count: the comment events change it.
    case 'comment.created':
      eachCard((card) => {
        if (card.id === event.comment.card_id) card.comment_count += 1;
      });
      break;
    case 'comment.deleted':
      eachCard((card) => {
        if (card.id === event.card_id) card.comment_count = Math.max(0, card.comment_count - 1);
      });
      break;
    // A member who leaves is gone from every card at once, with no card.updated per card.
    case 'member.removed':
      eachCard((card) => {
        card.assignee_ids = card.assignee_ids.filter((id) => id !== event.user_id);
      });
      break;
    case 'column.created':
    case 'column.updated':
    case 'column.moved':
      putColumn(event.column);
      break;
    case 'column.deleted':
      board.columns = board.columns.filter((c) => c.id !== event.column_id); // its cards go with it (archived ones too)
      break;
    case 'board.updated':
      Object.assign(board, event.board);
      break;
    case 'label.created':
    case 'label.updated':
      board.labels = board.labels
        .filter((l) => l.id !== event.label.id)
        .concat(event.label)
        .sort(byLabelName);
      relabel();
      break;
    case 'label.deleted':
      board.labels = board.labels.filter((l) => l.id !== event.label_id);
      relabel();
      break;
    // member.added, member.updated, comment.updated: nothing of the tree changes.
  }
}

// A plain script: the page that loads it calls watchBoard.
globalThis.watchBoard = watchBoard;
