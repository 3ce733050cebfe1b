import { execFileSync } from 'node:child_process';

/** Child-process tests run the built app, exactly what the Procfile starts: build it once. */
export default function setup(): void {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
}
