// The page of examples/webchat: a chat on useChat from @ai-sdk/react,
// talking to the Go server's uistream.NewAISDKHandler at /api/chat.
import { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
} from 'ai';

function Tool({ part, onAnswer }) {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice(5);
  return (
    <div className="tool" data-state={part.state} data-tool={name}>
      <div className="tool-head">
        <span className="tool-name">{name}</span>
        <span className="tool-state">{part.state}</span>
      </div>
      {part.input !== undefined && <pre className="tool-input">{JSON.stringify(part.input)}</pre>}
      {part.state === 'approval-requested' && (
        <div className="approval">
          <button className="approve" onClick={() => onAnswer(part.approval.id, true)}>Approve</button>
          <button className="reject" onClick={() => onAnswer(part.approval.id, false)}>Reject</button>
        </div>
      )}
      {part.state === 'output-available' && <pre className="tool-output">{typeof part.output === 'string' ? part.output : JSON.stringify(part.output)}</pre>}
      {part.state === 'output-error' && <pre className="tool-error">{part.errorText}</pre>}
      {part.state === 'output-denied' && <div className="tool-denied">rejected</div>}
    </div>
  );
}

function Part({ part, onAnswer }) {
  switch (part.type) {
    case 'text':
      return <div className="text">{part.text}</div>;
    case 'reasoning':
      return (
        <details className="reasoning" open={part.state === 'streaming'}>
          <summary>reasoning</summary>
          {part.text}
        </details>
      );
    case 'step-start':
      return null;
    case 'data-agent':
      return <div className="agent">agent {part.data.agent}: {part.data.status} {part.data.output}</div>;
    case 'data-handoff':
      return <div className="agent">handoff {part.data.from} → {part.data.to}</div>;
    default:
      if (part.type === 'dynamic-tool' || part.type.startsWith('tool-')) {
        return <Tool part={part} onAnswer={onAnswer} />;
      }
      return null;
  }
}

function Usage({ metadata }) {
  if (!metadata?.usage) return null;
  const u = metadata.usage;
  return (
    <div className="usage">
      {u.input_tokens} in / {u.output_tokens} out tokens
      {metadata.cost && metadata.cost.amount ? ` · $${metadata.cost.amount.toFixed(5)}` : ''}
    </div>
  );
}

function App() {
  const [input, setInput] = useState('');
  const { messages, sendMessage, addToolApprovalResponse, status, error } = useChat({
    transport: new DefaultChatTransport({ api: '/api/chat' }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const onAnswer = (id, approved) =>
    addToolApprovalResponse({ id, approved, reason: approved ? undefined : 'rejected on the page' });
  return (
    <main>
      <h1>Runlet web chat</h1>
      <div id="messages">
        {messages.map((m) => (
          <div key={m.id} className={'message ' + m.role} data-role={m.role}>
            {m.parts.map((p, i) => (
              <Part key={i} part={p} onAnswer={onAnswer} />
            ))}
            {m.role === 'assistant' && <Usage metadata={m.metadata} />}
          </div>
        ))}
      </div>
      {error && <div className="error">{error.message}</div>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!input.trim()) return;
          sendMessage({ text: input });
          setInput('');
        }}
      >
        <input
          id="prompt"
          value={input}
          placeholder="Ask about the weather…"
          onChange={(e) => setInput(e.target.value)}
          disabled={status !== 'ready' && status !== 'error'}
        />
        <button id="send" type="submit" disabled={status !== 'ready' && status !== 'error'}>Send</button>
      </form>
      <div id="status" data-status={status}>{status}</div>
    </main>
  );
}

createRoot(document.getElementById('root')).render(<App />);
