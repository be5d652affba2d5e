import { Field, InputType } from 'type-graphql';
import { Mode } from '../../core/entity';

@InputType()
export class CreateWebhookEndpointInput {
  @Field({ description: 'Receiver address. Live endpoints: https and a public address; test endpoints may use http and localhost.' })
  url!: string;

  @Field(() => Mode, { description: "Must equal the secret key's mode." })
  mode!: Mode;

  @Field(() => [String], { nullable: true, description: 'Default ["*"]: every event. Also exact types and prefixes such as "payment.*".' })
  enabledEvents?: string[] | null;

  @Field(() => String, { nullable: true })
  description?: string | null;
}
