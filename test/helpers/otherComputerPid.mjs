// Loaded with --import into a studio process a test starts, as if it ran on another computer: its pid is
// OTHER_COMPUTER_PID, one no process of this computer has, as another computer's pids mean nothing here.
const pid = Number(process.env.OTHER_COMPUTER_PID);
if (Number.isInteger(pid) && pid > 0) Object.defineProperty(process, 'pid', { value: pid });
