import { vi, type Mock } from 'vitest';
import { StreamResponse } from '@a2a-js/sdk';
import { PushNotificationSender } from '@a2a-js/sdk/server';
import { ServerCallContext } from '@a2a-js/sdk/server';

export class MockPushNotificationSender implements PushNotificationSender {
  public send: Mock<(streamResponse: StreamResponse, context: ServerCallContext) => Promise<void>> =
    vi.fn().mockResolvedValue(undefined);
}
