#pragma once

#include <QString>
#include <QUrl>

#include <optional>

namespace autocomp {

// A model string as Autocomp writes it: "provider::model", "vllm@http://host:port/v1::model",
// "openai-compatible@URL::model", or a bare model name whose provider is inferred.
// openai::MODEL speaks the Responses API; "openai::MODEL#chat" selects Chat Completions instead
// ("#responses" is accepted too). Other providers take no suffix.
struct ModelSpec
{
    QString provider; // openai | anthropic | aws | gcp | together | vllm | ollama | openrouter | openai-compatible
    QString model;
    QUrl baseUrl; // resolved: explicit @URL, then environment override, then the provider default
    QString text; // the original string
    QString api; // "chat" or "responses" from a #suffix; empty: the provider's default

    static std::optional<ModelSpec> parse(const QString &text, QString *error);
    // Infers the provider of a bare model name the way Autocomp does (gpt-/o1/o3/o4 -> openai, claude -> anthropic,
    // ...).
    static QString inferProvider(const QString &model);
    static QUrl defaultBaseUrl(const QString &provider);
    // Environment variable holding the provider's API key; empty when the provider needs none.
    static QString apiKeyVariable(const QString &provider);
    // The wire format: "openai-responses" (openai), "anthropic-messages", "gemini", "bedrock-converse", and
    // "openai-chat" for openai#chat and everything OpenAI compatible.
    QString wireFormat() const;
    // Gemini through Vertex AI (GOOGLE_CLOUD_PROJECT set) rather than the Gemini API.
    static bool useVertex();
    // AWS_REGION, else AWS_DEFAULT_REGION, else us-west-2.
    static QString awsRegion();
};

} // namespace autocomp
