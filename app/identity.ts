/** The installer's appId (electron-builder.yml); on Windows also the AppUserModelID notifications need. */
export const APP_ID = 'app.takestudio.desktop';
export const APP_NAME = 'Take Studio';
