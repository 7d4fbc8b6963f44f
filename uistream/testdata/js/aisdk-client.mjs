// The AI SDK's own client reading uistream's AI SDK handler: every chunk
// checked against the SDK's chunk schema (uiMessageChunkSchema), the
// stream read by DefaultChatTransport and readUIMessageStream as useChat
// reads it, an approval answered as addToolApprovalResponse answers it,
// and the conversation checked with validateUIMessages.
//
//   node aisdk-client.mjs URL SCENARIO
//
// Prints a JSON summary for the Go test (uistream's TestAISDKClient) to
// check; exits 1 with the reason on any protocol violation.
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  readUIMessageStream,
  uiMessageChunkSchema,
  validateUIMessages,
} from 'ai';
import { safeValidateTypes } from '@ai-sdk/provider-utils';

const [url, scenario] = process.argv.slice(2);

function fail(msg) {
  console.error('aisdk-client: ' + msg);
  process.exit(1);
}

// raw posts body and checks the response byte by byte: the header, one
// JSON chunk per data line, each valid by the SDK's schema, [DONE] last.
async function raw(body) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) fail(`status ${res.status}: ${await res.text()}`);
  if (res.headers.get('x-vercel-ai-ui-message-stream') !== 'v1') fail('no x-vercel-ai-ui-message-stream: v1 header');
  if (!res.headers.get('content-type').startsWith('text/event-stream')) fail('content type ' + res.headers.get('content-type'));
  const text = await res.text();
  const events = text.split('\n\n');
  if (events.pop() !== '') fail('the stream does not end with a blank line');
  if (events.pop() !== 'data: [DONE]') fail('the stream does not end with data: [DONE]');
  const chunks = [];
  for (const ev of events) {
    if (!ev.startsWith('data: ') || ev.includes('\n')) fail('not one data line: ' + JSON.stringify(ev));
    const chunk = JSON.parse(ev.slice(6));
    const r = await safeValidateTypes({ value: chunk, schema: uiMessageChunkSchema });
    if (!r.success) fail(`chunk ${ev} fails the SDK's schema: ${r.error.message}`);
    chunks.push(chunk);
  }
  return chunks;
}

// read sends messages through the SDK's transport and reads the answer
// into a message with readUIMessageStream, continuing `message` if given.
async function read(messages, message) {
  const transport = new DefaultChatTransport({ api: url });
  const stream = await transport.sendMessages({
    chatId: 'chat-1',
    messages,
    abortSignal: undefined,
    trigger: 'submit-message',
    messageId: undefined,
  });
  let last;
  let errors = [];
  for await (const m of readUIMessageStream({
    message,
    stream,
    onError: (e) => errors.push(String(e.message ?? e)),
  })) {
    last = m;
  }
  return { message: structuredClone(last), errors };
}

const user = (id, text) => ({ id, role: 'user', parts: [{ type: 'text', text }] });

const summary = { scenario };
if (scenario === 'approval') {
  const ask = [user('u1', 'Weather in Paris, then delete /tmp/x')];
  summary.rawTypes = (await raw({ id: 'chat-raw', messages: ask, trigger: 'submit-message' })).map((c) => c.type);
  const first = await read(ask);
  if (first.errors.length) fail('errors: ' + first.errors.join('; '));
  const msg = first.message;
  summary.first = structuredClone(msg);
  // addToolApprovalResponse({ id, approved: true }) sets these.
  for (const p of msg.parts) {
    if (p.state === 'approval-requested') {
      p.state = 'approval-responded';
      p.approval = { ...p.approval, approved: true };
    }
  }
  const conv = [...ask, msg];
  if (!lastAssistantMessageIsCompleteWithApprovalResponses({ messages: conv })) {
    fail('after the approval, useChat would not send: ' + JSON.stringify(msg));
  }
  const second = await read(conv, msg);
  if (second.errors.length) fail('errors: ' + second.errors.join('; '));
  summary.second = second.message;
  await validateUIMessages({ messages: [...ask, second.message] });
} else if (scenario === 'failure') {
  const ask = [user('u1', 'Fail please')];
  summary.rawTypes = (await raw({ id: 'chat-raw', messages: ask })).map((c) => c.type);
  const r = await read(ask);
  summary.errors = r.errors;
  summary.first = r.message;
} else if (scenario === 'plain') {
  const ask = [user('u1', 'Research and answer')];
  const chunks = await raw({ id: 'chat-raw', messages: ask });
  summary.rawTypes = chunks.map((c) => c.type);
  const r = await read(ask);
  if (r.errors.length) fail('errors: ' + r.errors.join('; '));
  summary.first = r.message;
  await validateUIMessages({ messages: [...ask, r.message] });
} else if (scenario === 'keepalive') {
  // The stream holds ": keep-alive" comments (the Go test's tool waits
  // for one): the SDK's reader (eventsource-parser, under
  // parseJsonEventStream) must skip them.
  const ask = [user('u1', 'Go slow')];
  const r = await read(ask);
  if (r.errors.length) fail('errors: ' + r.errors.join('; '));
  summary.first = r.message;
  await validateUIMessages({ messages: [...ask, r.message] });
} else {
  fail('unknown scenario ' + scenario);
}
console.log(JSON.stringify(summary));
