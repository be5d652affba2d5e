import { IsOptional, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { Mode } from '../../core/entity';

@InputType()
export class CreateWebhookEndpointInput {
  @Field({
    description:
      'Receiver address: https (test endpoints may also use http), on a public address unless the server setting WEBHOOK_ALLOW_PRIVATE_NETWORKS is on.',
  })
  @MaxLength(2048)
  url!: string;

  @Field(() => Mode, { description: "Must equal the secret key's mode." })
  mode!: Mode;

  @Field(() => [String], {
    nullable: true,
    description: 'Default ["*"]: every event. Also exact types and prefixes such as "payment.*".',
  })
  @IsOptional()
  @MaxLength(64, { each: true })
  enabledEvents?: string[] | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(500)
  description?: string | null;
}
