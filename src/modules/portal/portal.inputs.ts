import { Field, ID, InputType } from 'type-graphql';
import { MaxLength } from 'class-validator';

@InputType()
export class CreatePortalSessionInput {
  @Field(() => ID) customerId!: string;

  @Field({ description: 'An http(s) URL the portal links back to (the merchant account page).' })
  @MaxLength(2000)
  returnUrl!: string;
}
