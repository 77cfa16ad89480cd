/**
 * `POST /mcp`: the Model Context Protocol server (Streamable HTTP, stateless:
 * every request is answered on its own, no session to keep), behind the same
 * bearer tokens, roles and tenants as the rest of the API. The tools are in
 * `http/mcp/tools.ts`; `docs/mcp.md` shows a client's configuration.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.js';
import type { ServiceContext } from '../../service/context.js';
import { actorOf, scoped } from '../request-context.js';

/**
 * The MCP SDK and the tools, loaded by the first MCP request: they are ~8 MB
 * of heap that a service whose agents speak HTTP never uses, and V8 sizes
 * the old generation by a multiple of what is live.
 */
let mcp: Promise<[typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js'), typeof import('../mcp/tools.js')]> | undefined;
const loadMcp = () => (mcp ??= Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('../mcp/tools.js')]));

export async function mcpRoutes(app: FastifyInstance, { ctx: shared }: { ctx: ServiceContext }): Promise<void> {
  app.post(
    '/mcp',
    // Reading tools are for auditors too; the writing ones check the role themselves.
    { schema: { tags: ['mcp'], summary: 'Model Context Protocol (Streamable HTTP, stateless): save_checkpoint, get_latest_checkpoint, get_resume_prompt, hand_off_task, acknowledge_handoff, search_checkpoints; prompt resume_task' }, config: { roles: ['writer', 'auditor', 'admin'] } },
    async (request, reply) => {
      const [{ StreamableHTTPServerTransport }, { mcpServer }] = await loadMcp();
      const server = mcpServer(scoped(shared, request), actorOf(request));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );

  // Stateless: there is no stream to open (GET) and no session to end (DELETE).
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      schema: { hide: true },
      config: { roles: ['writer', 'auditor', 'admin'] },
      handler: async (_request, reply) => {
        reply.header('Allow', 'POST');
        throw new AppError('method_not_allowed', { detail: 'This MCP server is stateless: send every message as POST /mcp.' });
      },
    });
  }
}
