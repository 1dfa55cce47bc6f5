/** Decision updates are sent again only while the server refuses them during a workflow task retry. */
import { ServiceError, type WorkflowHandle } from '@temporalio/client';
import { pauseUpdate } from '../../../loop/messages';
import { executeUpdateRetrying, isTaskRetryRefusal } from '../../../server/temporal/update-retry';

const update = pauseUpdate;
const refusal = () =>
  new ServiceError('Workflow Update failed', {
    cause: Object.assign(new Error('x'), {
      code: 9,
      details: 'Unable to perform workflow execution update due to Workflow Task in failed state.',
    }),
  });

function handleFailing(times: number, error: () => Error): { handle: WorkflowHandle; calls: () => number } {
  let calls = 0;
  const handle = {
    executeUpdate: (_def: unknown, { args }: { args: [{ who: string }] }) => {
      calls += 1;
      return calls <= times ? Promise.reject(error()) : Promise.resolve(`applied ${args[0].who}`);
    },
  } as unknown as WorkflowHandle;
  return { handle, calls: () => calls };
}

test('the task-retry refusal is recognised; other errors are not', () => {
  expect(isTaskRetryRefusal(refusal())).toBe(true);
  expect(
    isTaskRetryRefusal(
      new ServiceError('Workflow Update failed', {
        cause: Object.assign(new Error('x'), { code: 9, details: 'something else' }),
      }),
    ),
  ).toBe(false);
  expect(isTaskRetryRefusal(new Error('Workflow Task in failed state'))).toBe(false);
});

test('sent again after the refusal, until the server admits it', async () => {
  const h = handleFailing(2, refusal);
  await expect(executeUpdateRetrying(h.handle, update, [{ who: 'now', why: 'test' }])).resolves.toBe('applied now');
  expect(h.calls()).toBe(3);
});

test('any other error is thrown at once', async () => {
  const h = handleFailing(1, () => new Error('workflow not found'));
  await expect(executeUpdateRetrying(h.handle, update, [{ who: 'now', why: 'test' }])).rejects.toThrow(
    'workflow not found',
  );
  expect(h.calls()).toBe(1);
});
