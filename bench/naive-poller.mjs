// The baseline of the poll-economy benchmark: a naive fixed-interval poller, as a first version
// of such a bot would be. Every interval it GETs every job it has not yet seen end, all at once,
// and posts the outcome in the job's thread as soon as it sees one. Prints `{}` when done.
//
// Input (JSON in argv[2]): { baseUrl, apiKey, projectId, jobs: [{ id, channel, threadTs }],
//   intervalMs, slackApiUrl, botToken }
const input = JSON.parse(process.argv[2] ?? '{}');
const open = new Set(input.jobs);

async function poll(job) {
  try {
    const res = await fetch(`${input.baseUrl}/v2/agent/${input.projectId}/job/${job.id}`, {
      headers: { authorization: `Bearer ${input.apiKey}` },
    });
    const body = await res.json();
    if (body.status === 'active' || !open.delete(job)) return;
    await fetch(`${input.slackApiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${input.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: job.channel, thread_ts: job.threadTs, text: `Done: ${body.prLink}` }),
    });
  } catch {
    // Tried again next interval.
  }
}

await new Promise((resolve) => {
  const timer = setInterval(() => {
    if (open.size === 0) {
      clearInterval(timer);
      resolve();
      return;
    }
    for (const job of open) void poll(job);
  }, input.intervalMs);
});
process.stdout.write('{}\n');
