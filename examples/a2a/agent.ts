/**
 * The example's A2A agent: it files a support ticket in two turns. The
 * first message opens a task and asks for the priority (input-required);
 * the answer, sent to the same task (to any replica), completes it with the
 * ticket as an artifact. Everything the second turn knows of the first is
 * what the task store kept.
 */
import { A2A_PROTOCOL_VERSION, Role, TaskState, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';

export function agentCard(url: string): AgentCard {
  return {
    name: 'Ticket desk',
    description: 'Files support tickets.',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
    provider: undefined,
    version: '1.0.0',
    documentationUrl: '',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'file-ticket', name: 'File a ticket', description: 'Files a support ticket.', tags: ['support'], examples: [], inputModes: ['text/plain'], outputModes: ['text/plain'], securityRequirements: [] }],
    signatures: [],
  };
}

export function text(message: Message | undefined): string {
  return (message?.parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
}

export function agentMessage(taskId: string, contextId: string, said: string): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: 'text', value: said }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export class TicketDesk implements AgentExecutor {
  constructor(private readonly replica: string) {}

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = context;
    const now = () => new Date().toISOString();
    if (context.task === undefined) {
      const task: Task = {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
        artifacts: [],
        history: [userMessage],
        metadata: { openedBy: this.replica },
      };
      bus.publish(AgentEvent.task(task));
      const ask = agentMessage(taskId, contextId, `Which priority for "${text(userMessage)}"?`);
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: ask, timestamp: now() }, metadata: undefined }));
      return;
    }
    const problem = text(context.task.history[0]);
    const ticket = `${text(userMessage)}: ${problem} (opened by ${String(context.task.metadata?.openedBy)}, filed by ${this.replica})`;
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: { artifactId: 'ticket', name: 'ticket', description: 'The filed ticket', parts: [{ content: { $case: 'text', value: ticket }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [] },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_COMPLETED, message: agentMessage(taskId, contextId, 'Filed.'), timestamp: now() }, metadata: undefined }));
  }

  async cancelTask(): Promise<void> {}
}
