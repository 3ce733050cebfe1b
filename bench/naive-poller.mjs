// The baseline of the poll-economy benchmark: a naive fixed-interval poller, as a first version
// of such a bot would be. Every interval it GETs every job it has not yet seen end, all at once,
// and notes when it saw each one end. Prints one JSON line: { seenAt: { jobId: epoch ms } }.
//
// Input (JSON in argv[2]): { baseUrl, apiKey, projectId, jobIds, intervalMs }
const input = JSON.parse(process.argv[2] ?? '{}');
const now = () => performance.timeOrigin + performance.now();
const open = new Set(input.jobIds);
const seenAt = {};

async function poll(id) {
  try {
    const res = await fetch(`${input.baseUrl}/v2/agent/${input.projectId}/job/${id}`, {
      headers: { authorization: `Bearer ${input.apiKey}` },
    });
    const job = await res.json();
    if (job.status !== 'active' && open.delete(id)) seenAt[id] = now();
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
    for (const id of open) void poll(id);
  }, input.intervalMs);
});
process.stdout.write(`${JSON.stringify({ seenAt })}\n`);
