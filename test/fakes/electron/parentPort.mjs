// Electron's process.parentPort (docs/api/parent-port.md) for a child the stand-in's utilityProcess.fork started,
// played over Node's IPC channel (node --import of this module sets it up): postMessage sends to the parent, and
// each message from it is a 'message' event whose `data` is the message. Messages that come before a listener is
// added are kept for it, as Electron keeps them.
import { EventEmitter } from 'node:events';

const port = new EventEmitter();
const kept = [];
const deliver = (data) => port.emit('message', { data, ports: [] });
port.postMessage = (message) => {
  if (process.connected) process.send(message);
};
process.on('message', (data) => (port.listenerCount('message') > 0 ? deliver(data) : kept.push(data)));
port.on('newListener', (event) => {
  if (event === 'message') setImmediate(() => kept.splice(0).forEach(deliver));
});
process.parentPort = port;

// The stand-in's child ends with the process that forked it, so no test leaves one holding a data folder.
process.on('disconnect', () => process.exit(0));
