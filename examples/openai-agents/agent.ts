/**
 * The example's agent: it drafts a release note and publishes it with a
 * tool that needs a person's approval. So that the example runs offline,
 * its model is the SDK's ScriptedModel answering from the conversation (call
 * the tool first, then report what the tool said); give the agent
 * `model: 'gpt-5.1'` and an OPENAI_API_KEY to run it against OpenAI.
 */
import { Agent, Usage, tool, type ModelRequest } from '@openai/agents-core';
import { ScriptedModel, assistantMessage, functionCall, modelResponder } from '@openai/agents-core/testing';
import { z } from 'zod';

export function releaseAgent(options: { onPublish?: (text: string) => Promise<void> } = {}): Agent {
  const publish = tool({
    name: 'publish_note',
    description: 'Publishes a release note to the changelog.',
    parameters: z.object({ text: z.string() }),
    needsApproval: true,
    async execute({ text }) {
      await options.onPublish?.(text);
      return `published: ${text}`;
    },
  });
  return new Agent({ name: 'Release writer', instructions: 'Draft a release note and publish it with publish_note.', model: scriptedModel(), tools: [publish] });
}

/** Calls publish_note while the conversation has no tool result yet, then reports the result. */
function scriptedModel(): ScriptedModel {
  const respond = ({ request }: { request: ModelRequest }) => {
    const items = typeof request.input === 'string' ? [] : request.input;
    const result = items.findLast((item) => item.type === 'function_call_result');
    if (result !== undefined) {
      const output = (result as { output: { text?: string } | string }).output;
      return { usage: new Usage(), output: [assistantMessage(`Done, ${typeof output === 'string' ? output : (output.text ?? '')}`)] };
    }
    return { usage: new Usage(), output: [functionCall('publish_note', { text: 'Leases for OpenAI Agents sessions.' }, { callId: 'call_publish' })] };
  };
  return new ScriptedModel(Array.from({ length: 8 }, () => modelResponder(respond)));
}
