// A long stack operation as its output panel (OperationLog) shows it.
export interface Operation {
  title: string;
  state: 'running' | 'done' | 'failed';
  lines: string[];
  /** What the end said (the error, when it failed). */
  message?: string;
}
