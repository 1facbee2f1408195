// Package cloudcreds finds the credentials of the clouds darman reaches
// Claude through, without their SDKs' start-up cost: AWS keys for Amazon
// Bedrock ([ReadAWSSetup], [ResolveAWS]: the environment, the shared
// profile's keys or credential_process, else the AWS CLI) and Google access
// tokens for Vertex AI ([ResolveGCP]: the application default credentials'
// files and metadata server, else gcloud). [AWS] and [GCP] cache what they
// fetched and fetch again before it expires; both are safe for concurrent
// use.
//
// The provider constructor (agent/llm/provider) resolves them and hands
// them to agent/llm/anthropic, which signs each request with them.
package cloudcreds
