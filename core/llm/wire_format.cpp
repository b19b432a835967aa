#include "llm/wire_format.h"

#include "llm/anthropic_messages_format.h"
#include "llm/bedrock_converse_format.h"
#include "llm/gemini_format.h"
#include "llm/openai_chat_format.h"
#include "llm/openai_responses_format.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace autocomp {

WireFormat::~WireFormat() = default;

QString WireFormat::errorMessage(const QByteArray &body) const
{
    const QJsonDocument document = QJsonDocument::fromJson(body);
    // Gemini's streaming endpoint without alt=sse wraps errors in an array.
    const QJsonObject object = document.isArray() ? document.array().at(0).toObject() : document.object();
    const QJsonValue error = object.value(QLatin1String("error"));
    QString message;
    if (error.isObject())
        message = error.toObject().value(QLatin1String("message")).toString(); // OpenAI, Anthropic, Gemini
    else if (error.isString())
        message = error.toString();
    if (message.isEmpty())
        message = object.value(QLatin1String("message")).toString(); // Bedrock
    if (message.isEmpty())
        message = object.value(QLatin1String("Message")).toString();
    if (message.isEmpty())
        message = QString::fromUtf8(body.left(500)).trimmed();
    return message;
}

const WireFormat *WireFormat::forName(const QString &name)
{
    static const OpenAiChatFormat s_chat;
    static const OpenAiResponsesFormat s_responses;
    static const AnthropicMessagesFormat s_anthropic;
    static const GeminiFormat s_gemini;
    static const BedrockConverseFormat s_bedrock;
    for (const WireFormat *format :
         std::initializer_list<const WireFormat *>{&s_chat, &s_responses, &s_anthropic, &s_gemini, &s_bedrock})
        if (format->name() == name)
            return format;
    return nullptr;
}

bool WireFormat::isReasoningModel(const QString &model)
{
    const QString m = model.toLower().section(QLatin1Char('/'), -1);
    return m.startsWith(QLatin1String("o1")) || m.startsWith(QLatin1String("o3")) || m.startsWith(QLatin1String("o4"))
        || (m.startsWith(QLatin1String("gpt-5")) && !m.contains(QLatin1String("chat")));
}

void WireFormat::dropParameters(QJsonObject *body, const QSet<QString> &dropped)
{
    for (const QString &path : dropped) {
        const QStringList keys = path.split(QLatin1Char('.'));
        // Walk down to the parent, then write the modified objects back up (QJsonObject is a value type).
        QList<QJsonObject> chain{*body};
        for (qsizetype i = 0; i + 1 < keys.size(); ++i) {
            const QJsonValue next = chain.last().value(keys.at(i));
            if (!next.isObject())
                break;
            chain.append(next.toObject());
        }
        if (chain.size() != keys.size())
            continue;
        chain.last().remove(keys.last());
        for (qsizetype i = chain.size() - 1; i > 0; --i)
            chain[i - 1].insert(keys.at(i - 1), chain.at(i));
        *body = chain.first();
    }
}

QUrl WireFormat::joinUrl(const QUrl &base, const QByteArray &path)
{
    QByteArray encoded = base.toEncoded(QUrl::RemoveQuery | QUrl::RemoveFragment);
    while (encoded.endsWith('/'))
        encoded.chop(1);
    return QUrl::fromEncoded(encoded + path, QUrl::StrictMode);
}

} // namespace autocomp
