// AG-UI's own client reading uistream's AG-UI handler: @ag-ui/client's
// HttpAgent runs the agent (its verifier refuses any event out of order,
// its enforcement stage warns of anything the protocol does not describe,
// which fails this script), and every event the handler wrote is checked
// against @ag-ui/core's schemas (EventSchemas), one JSON event per data
// line.
//
//   node agui-client.mjs URL SCENARIO
//
// Prints a JSON summary for the Go test (uistream's TestAGUIClient) to
// check; exits 1 with the reason on any protocol violation.
import { HttpAgent, buildResumeArray } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';

const [url, scenario] = process.argv.slice(2);

function fail(msg) {
  console.error('agui-client: ' + msg);
  process.exit(1);
}

// The client's enforcement stage warns, and goes on, when an event holds
// something the protocol does not describe: here that is a failure.
console.warn = (...args) => fail('the client warned: ' + args.join(' '));

// bodies holds each response's text, teed off the client's fetch.
const bodies = [];

function newAgent(options) {
  return new HttpAgent({
    url,
    threadId: 'thread-1',
    ...options,
    fetch: async (u, init) => {
      const res = await fetch(u, init);
      if (res.status !== 200) fail(`status ${res.status}: ${await res.text()}`);
      if (!res.headers.get('content-type').startsWith('text/event-stream')) fail('content type ' + res.headers.get('content-type'));
      bodies.push(res.clone().text());
      return res;
    },
  });
}

// checkBodies checks every response byte by byte: one event per data
// line, each valid by the protocol's schema, or a keep-alive comment
// (counted in summary.comments).
async function checkBodies() {
  let n = 0;
  summary.comments = 0;
  for (const text of await Promise.all(bodies)) {
    const frames = text.split('\n\n');
    if (frames.pop() !== '') fail('a stream does not end with a blank line');
    for (const frame of frames) {
      if (frame === ': keep-alive') {
        summary.comments++;
        continue;
      }
      if (!frame.startsWith('data: ') || frame.includes('\n')) fail('not one data line: ' + JSON.stringify(frame));
      const r = EventSchemas.safeParse(JSON.parse(frame.slice(6)));
      if (!r.success) fail(`event ${frame} fails @ag-ui/core's schema: ${r.error.message}`);
      n++;
    }
  }
  return n;
}

// run runs the agent once and returns the types of the events its
// subscribers saw, and the run's error if it failed (RUN_ERROR's message).
async function run(agent, params) {
  const types = [];
  let error;
  try {
    await agent.runAgent(params, {
      onEvent: ({ event }) => {
        types.push(event.type);
        if (event.type === 'RUN_ERROR') error = event.message;
      },
    });
  } catch (e) {
    error = String(e && e.message);
  }
  return { types, error };
}

const summary = {};
switch (scenario) {
  case 'chat': {
    const agent = newAgent({ initialMessages: [{ id: 'u1', role: 'user', content: 'Weather in Paris?' }] });
    Object.assign(summary, await run(agent));
    summary.messages = agent.messages;
    break;
  }
  case 'approval':
  case 'nested-approval': {
    // 'approval' approves with edited arguments; 'nested-approval', a
    // call of an agent called as a tool, approves as proposed.
    const agent = newAgent({ initialMessages: [{ id: 'u1', role: 'user', content: 'Delete /tmp/a' }] });
    summary.first = await run(agent);
    summary.interrupts = agent.pendingInterrupts;
    if (agent.pendingInterrupts.length !== 1) fail('no pending interrupt after the first run');
    const [i] = agent.pendingInterrupts;
    const resume = buildResumeArray(agent.pendingInterrupts, {
      [i.id]: {
        status: 'resolved',
        payload: scenario === 'approval' ? { approved: true, editedArgs: { path: '/tmp/b' } } : { approved: true },
      },
    });
    summary.second = await run(agent, { resume });
    summary.pendingAfter = agent.pendingInterrupts.length;
    summary.messages = agent.messages;
    break;
  }
  case 'two-turns': {
    // The second run's input holds the first run's messages as the client
    // built them from the stream: the history round trip.
    const agent = newAgent({ initialMessages: [{ id: 'u1', role: 'user', content: 'Weather in Paris?' }] });
    summary.first = await run(agent);
    agent.addMessage({ id: 'u2', role: 'user', content: 'And tomorrow?' });
    summary.second = await run(agent);
    summary.messages = agent.messages;
    break;
  }
  case 'frontend-tool': {
    // A tool the page runs itself (a frontend tool): the first run ends
    // with the call pending, the page answers it with a tool message.
    const tools = [{
      name: 'confirm_booking',
      description: 'Ask the user to confirm a booking.',
      parameters: { type: 'object', properties: { hotel: { type: 'string' } }, required: ['hotel'] },
    }];
    const agent = newAgent({ initialMessages: [{ id: 'u1', role: 'user', content: 'Book the Ritz' }] });
    summary.first = await run(agent, { tools });
    const call = agent.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.function.name === 'confirm_booking');
    if (!call) fail('no call of the page tool in the client messages');
    agent.addMessage({ id: 'tool-1', role: 'tool', toolCallId: call.id, content: 'confirmed by the user' });
    summary.second = await run(agent, { tools });
    summary.messages = agent.messages;
    break;
  }
  case 'state': {
    const agent = newAgent({
      initialMessages: [{ id: 'u1', role: 'user', content: 'Add eggs' }],
      initialState: { cart: ['milk'] },
    });
    Object.assign(summary, await run(agent));
    summary.state = agent.state;
    break;
  }
  case 'error':
  case 'parts':
  case 'subagent':
  case 'keepalive': {
    // 'keepalive': the stream holds ": keep-alive" comments (the Go
    // test's tool waits for one), which the client's SSE parser skips.
    const agent = newAgent({ initialMessages: [{ id: 'u1', role: 'user', content: 'Hello' }] });
    Object.assign(summary, await run(agent));
    summary.messages = agent.messages;
    break;
  }
  default:
    fail('unknown scenario ' + scenario);
}
summary.checked = await checkBodies();
console.log(JSON.stringify(summary));
