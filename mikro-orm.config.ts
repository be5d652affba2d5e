import 'reflect-metadata';
import { serviceOrmConfig } from './src/core/orm-config';
import { entities } from './src/entities';

/** The service's MikroORM configuration with every entity of src/entities.ts (the MikroORM CLI reads this file). */
export function ormConfig(clientUrl: string, poolMax = 10) {
  return serviceOrmConfig(clientUrl, entities, poolMax);
}

export default ormConfig(process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/cadence');
