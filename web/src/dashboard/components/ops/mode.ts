import { loadKeys, type Mode } from '../../../lib/session';

/**
 * The mode of the key the dashboard signed in with. Switching mode changes the key, which mounts the pages again,
 * so reading it once per mount is enough.
 */
export const currentMode = (): Mode => loadKeys().mode;
