#pragma once

#include "fake_http_request.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace autocomp::test {

// What the server needs from a request, independent of the provider's wire format.
struct DialectRequest
{
    QString model;
    QString prompt; // text of all messages (system included), joined by newlines
    QString lastUserMessage;
    bool stream = false;
    bool includeUsage = false; // OpenAI stream_options.include_usage
};

// The answer to render in the provider's format.
struct DialectReply
{
    QString id;
    QString model;
    QString content;
    QString reasoning; // thinking / reasoning summary, in the format's own reasoning field; empty: none
    int promptTokens = 0;
    int completionTokens = 0; // reasoning tokens included
    int reasoningTokens = 0;
    int cachedTokens = 0; // of promptTokens
    qint64 created = 0; // seconds since the epoch
    bool cutAtLimit = false; // the answer ends at the output-token limit (each format's own stop reason)
};

// One provider wire format. The server picks the first dialect whose route() claims the request, so
// adding OpenAI Responses, Anthropic Messages, Gemini or Bedrock Converse is a new subclass registered in
// FakeLlmServer; everything format-specific stays in that subclass.
class LlmDialect
{
public:
    enum class Endpoint { None, Generate, ListModels };

    virtual ~LlmDialect();

    virtual QString name() const = 0;
    virtual Endpoint route(const FakeHttpRequest &request) const = 0;
    // Fills `out` from the request body; false with `error` set for a request the real API would reject.
    virtual bool parseRequest(const FakeHttpRequest &request, const QJsonObject &body, DialectRequest *out,
                              QString *error) const = 0;

    virtual QByteArray completionBody(const DialectRequest &request, const DialectReply &reply) const = 0;
    // The stream as framed events (each one complete, e.g. "data: {...}\n\n"), in order.
    virtual QList<QByteArray> streamEvents(const DialectRequest &request, const DialectReply &reply) const = 0;
    virtual QByteArray streamContentType() const { return QByteArrayLiteral("text/event-stream"); }
    virtual QByteArray errorBody(int status, const QString &message) const = 0;
    // An error reported inside a stream after HTTP 200, framed as the provider frames it.
    virtual QByteArray streamErrorEvent(const QString &message) const = 0;
    virtual QByteArray modelListBody(const QStringList &models) const = 0;

    // One server-sent event: "event: NAME\n" (when NAME is not empty) and "data: JSON\n\n".
    static QByteArray sseEvent(const QByteArray &name, const QJsonObject &data);
    // Splits streamed text into several pieces (never inside a surrogate pair), as providers send tokens.
    static QStringList splitForStreaming(const QString &content);
};

} // namespace autocomp::test
