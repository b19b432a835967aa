#pragma once

#include "fake_http_request.h"

#include <QList>
#include <QRegularExpression>
#include <QString>

#include <optional>

namespace autocomp::test {

// Fault injection of one scripted response, in every dialect:
//   reset_mid_stream  half the stream (or body), then a TCP reset
//   malformed_json    one stream event (or the body) cut in the middle of its JSON
//   error_event       half the stream, then the provider's in-stream error event (error_message, default
//                     text otherwise) and a proper end; without streaming an error body under HTTP 200
//   never_end         half the stream (or body), then nothing: the connection stays open
//   drip              the whole answer in small pieces cut at arbitrary bytes, chunk_delay_ms (default 20) apart
//   close_before_answer  the request is read whole, then the connection closes without a byte of answer
//   endless           a stream (or body) of the content repeated without end, chunk_delay_ms apart
enum class FakeFault { None, ResetMidStream, MalformedJson, ErrorEvent, NeverEnd, Drip, CloseBeforeAnswer, Endless };

QString fakeFaultName(FakeFault fault);

struct ScriptedResponse
{
    QString content;
    QString reasoning; // sent in the format's reasoning/thinking field
    int promptTokens = -1; // -1: estimated from the prompt (chars / 4)
    int completionTokens = -1; // -1: estimated from the content (chars / 4) plus reasoningTokens
    int reasoningTokens = 0;
    int cachedTokens = 0;
    int delayMs = 0;
    int chunkDelayMs = 0;
    int status = 200;
    QString errorMessage;
    HttpHeaders headers;
    FakeFault fault = FakeFault::None;
    bool gzip = false; // a whole body sent with Content-Encoding: gzip
    bool cutAtLimit = false; // `cut_at_limit: true`: the answer stops at the output-token limit, as the format says it
};

struct ScriptRule
{
    QString name;
    QRegularExpression match; // searched in the last user message; invalid pattern never stored
    QRegularExpression model;
    bool hasMatch = false;
    bool hasModel = false;
    bool cycle = false;
    QList<ScriptedResponse> responses;
    int served = 0;
};

// The rules of a fake-llm-server script (YAML). Format, with paths relative to the script's folder:
//   models: [name, ...]              optional, listed by GET /v1/models
//   rules:
//     - name, match (regex on the last user message), model (regex), cycle (bool),
//       responses: [{content | content_file, reasoning,
//                    usage: {prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens}, delay_ms,
//                    chunk_delay_ms, status, error_message, headers: {k: v}, fault, gzip}]
// Unknown keys are errors, so a typo in a script does not silently change a test.
class FakeLlmScript
{
public:
    static std::optional<FakeLlmScript> parse(const QByteArray &yaml, const QString &baseDir, QString *error);

    struct Selection
    {
        int rule = -1;
        int response = -1;
    };
    // The first rule that matches and is not exhausted; advances that rule. nullopt when nothing matches.
    std::optional<Selection> take(const QString &lastUserMessage, const QString &model);

    const ScriptRule &rule(int index) const { return m_rules.at(index); }
    const QList<ScriptRule> &rules() const { return m_rules; }
    const QStringList &models() const { return m_models; }

private:
    QList<ScriptRule> m_rules;
    QStringList m_models;
};

} // namespace autocomp::test
