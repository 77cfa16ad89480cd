import { vi, type Mock } from 'vitest';
import { Task, ListTasksRequest, ListTasksResponse } from '@a2a-js/sdk';
import { TaskStore } from '@a2a-js/sdk/server';
import { ServerCallContext } from '@a2a-js/sdk/server';

export class MockTaskStore implements TaskStore {
  public save: Mock<(task: Task, ctx?: ServerCallContext) => Promise<void>> = vi.fn();
  public load: Mock<(id: string, ctx?: ServerCallContext) => Promise<Task | undefined>> = vi.fn();
  public list: Mock<
    (params: ListTasksRequest, ctx?: ServerCallContext) => Promise<ListTasksResponse>
  > = vi.fn();
}
