// Every provider wire format (OpenAI Responses and Chat Completions, Anthropic Messages, Gemini / Vertex AI,
// Bedrock Converse) through the real LlmClient against the loopback fake server: what is sent, what is
// read back, how each fault ends, and what a response costs.
#include "llm/llm_client.h"
#include "llm/model_spec.h"
#include "llm/price_table.h"

#include "fake_llm_server.h"
#include "tinyproxy.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace Qt::StringLiterals;
using namespace autocomp;
using autocomp::test::FakeLlmServer;
using autocomp::test::RecordedRequest;

namespace {

constexpr int Timeout = 20000;

// Model strings per wire format, {base} replaced by the fake server's URL.
QString modelTemplate(const QString &format)
{
    if (format == u"responses")
        return u"openai@{base}/v1::gpt-4.1"_s;
    if (format == u"chat")
        return u"openai@{base}/v1::gpt-4.1#chat"_s;
    if (format == u"anthropic")
        return u"anthropic@{base}::claude-sonnet-4-5"_s;
    if (format == u"gemini")
        return u"gcp@{base}/v1beta::gemini-2.5-pro"_s;
    if (format == u"bedrock")
        return u"aws@{base}::us.anthropic.claude-sonnet-4-5-20250929-v1:0"_s;
    return {};
}

const QStringList &formats()
{
    static const QStringList s_formats{u"responses"_s, u"chat"_s, u"anthropic"_s, u"gemini"_s, u"bedrock"_s};
    return s_formats;
}

// A value in a JSON document by dotted path ("input.0.content"), as compact JSON; "<absent>" when missing.
QString jsonAt(const QJsonObject &root, const QString &path)
{
    QJsonValue value = root;
    for (const QString &key : path.split(u'.')) {
        bool isIndex = false;
        const int index = key.toInt(&isIndex);
        if (isIndex && value.isArray() && index < value.toArray().size())
            value = value.toArray().at(index);
        else if (!isIndex && value.isObject() && value.toObject().contains(key))
            value = value.toObject().value(key);
        else
            return u"<absent>"_s;
    }
    if (value.isObject())
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    if (value.isArray())
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    // A scalar: wrap it in an array to serialise it, then unwrap.
    const QString wrapped = QString::fromUtf8(QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact));
    return wrapped.mid(1, wrapped.size() - 2);
}

QByteArray indent(const QByteArray &yaml, int spaces)
{
    QByteArray out;
    for (const QByteArray &line : yaml.split('\n'))
        if (!line.isEmpty())
            out += QByteArray(spaces, ' ') + line + '\n';
    return out;
}

} // namespace

class TestLlmProviders : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void requestShape_data();
    void requestShape();
    void responseAndUsage_data();
    void responseAndUsage();
    void faults_data();
    void faults();
    void closeAfterEveryAnswer_data();
    void closeAfterEveryAnswer();
    void cutAtTheTokenLimit_data();
    void cutAtTheTokenLimit();
    void unsupportedParameterIsDropped_data();
    void unsupportedParameterIsDropped();
    void unsupportedParameterName_data();
    void unsupportedParameterName();
    void vertexUsesGcloudToken();
    void vertexWithoutGcloudFailsClearly();
    void vertexDefaultBaseUrl();
    void bedrockSigV4();
    void bedrockWithoutCredentialsFailsClearly();
    void modelSpecApiSuffix_data();
    void modelSpecApiSuffix();
    void priceTableLookup_data();
    void priceTableLookup();
    void shippedPriceTable();
    void userPriceTableShadowsShipped();

private:
    bool loadScript(const QByteArray &yaml);
    LlmRequest request(const QString &modelTemplate, bool stream = true) const;
    bool waitFor(LlmReply *reply);
    LlmReply *sendAndWait(const LlmRequest &request);

    std::unique_ptr<FakeLlmServer> m_server;
    std::unique_ptr<LlmClient> m_client;
    QString m_awsKey;
};

void TestLlmProviders::initTestCase()
{
    for (const char *name : {"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
                             "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_BEDROCK_BASE_URL", "AWS_ACCESS_KEY_ID",
                             "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"})
        qunsetenv(name);
}

void TestLlmProviders::init()
{
    m_server = std::make_unique<FakeLlmServer>();
    QVERIFY2(m_server->listen(), qPrintable(m_server->errorString()));
    m_client = std::make_unique<LlmClient>();
    m_awsKey = u"KEY-aws"_s;
    m_client->setApiKeyLookup(
        [this](const QString &provider) { return provider == u"aws" ? m_awsKey : u"KEY-"_s + provider; });
    const auto prices = PriceTable::parse(
        "as_of: 2026-01-01\nmodels:\n"
        "  openai::gpt-4.1: {input: 2, output: 10, cached_input: 0.5}\n"
        "  anthropic::claude-sonnet-4-5: {input: 2, output: 10, cached_input: 0.5}\n"
        "  gcp::gemini-2.5-pro: {input: 2, output: 10, cached_input: 0.5}\n"
        "  aws::us.anthropic.claude-sonnet-4-5: {input: 2, output: 10, cached_input: 0.5}\n",
        nullptr);
    QVERIFY(prices);
    m_client->setPriceTable(std::make_shared<const PriceTable>(*prices));
}

void TestLlmProviders::cleanup()
{
    m_client.reset();
    m_server.reset();
    for (const char *name : {"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "AWS_ACCESS_KEY_ID",
                             "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION"})
        qunsetenv(name);
}

bool TestLlmProviders::loadScript(const QByteArray &yaml)
{
    QString error;
    if (!m_server->loadScriptText(yaml, QString(), &error)) {
        qWarning().noquote() << "script error:" << error << "\n" << yaml;
        return false;
    }
    return true;
}

LlmRequest TestLlmProviders::request(const QString &modelTemplate, bool stream) const
{
    QString text = modelTemplate;
    text.replace(u"{base}"_s, m_server->baseUrl().toString());
    QString error;
    const auto spec = ModelSpec::parse(text, &error);
    if (!spec)
        qFatal("cannot parse model %s: %s", qPrintable(text), qPrintable(error));
    LlmRequest r;
    r.spec = *spec;
    r.system = u"SYS"_s;
    r.prompt = u"PROMPT"_s;
    r.stream = stream;
    return r;
}

bool TestLlmProviders::waitFor(LlmReply *reply)
{
    QSignalSpy spy(reply, &LlmReply::finished);
    if (!reply->isFinished() && !spy.wait(Timeout))
        return false;
    return reply->isFinished();
}

LlmReply *TestLlmProviders::sendAndWait(const LlmRequest &request)
{
    LlmReply *reply = m_client->send(request);
    if (!waitFor(reply))
        qWarning("the reply did not finish in time");
    reply->deleteLater();
    return reply;
}

void TestLlmProviders::requestShape_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<bool>("stream");
    QTest::addColumn<QString>("effort");
    QTest::addColumn<int>("thinking");
    QTest::addColumn<int>("maxTokens");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("query");
    QTest::addColumn<QStringList>("headers"); // name=value
    QTest::addColumn<QStringList>("body"); // dotted.path=json, or dotted.path=<absent>

    QTest::newRow("openai responses") << modelTemplate(u"responses"_s) << true << QString() << 0 << 8192
                                      << u"/v1/responses"_s << QString()
                                      << QStringList{u"authorization=Bearer KEY-openai"_s}
                                      << QStringList{u"model=\"gpt-4.1\""_s,
                                                     u"instructions=\"SYS\""_s,
                                                     u"input.0.role=\"user\""_s,
                                                     u"input.0.content=\"PROMPT\""_s,
                                                     u"max_output_tokens=8192"_s,
                                                     u"temperature=0.7"_s,
                                                     u"stream=true"_s,
                                                     u"reasoning=<absent>"_s,
                                                     u"messages=<absent>"_s};
    QTest::newRow("openai responses, reasoning model")
        << u"openai@{base}/v1::o3"_s << false << u"high"_s << 0 << 8192 << u"/v1/responses"_s << QString()
        << QStringList{u"authorization=Bearer KEY-openai"_s}
        << QStringList{u"reasoning.effort=\"high\""_s, u"temperature=<absent>"_s, u"stream=<absent>"_s};
    QTest::newRow("openai responses, gpt-5 default effort")
        << u"openai@{base}/v1::gpt-5.2"_s << true << QString() << 0 << 8192 << u"/v1/responses"_s << QString()
        << QStringList{} << QStringList{u"reasoning.effort=\"medium\""_s, u"temperature=<absent>"_s};
    QTest::newRow("openai chat") << modelTemplate(u"chat"_s) << true << QString() << 0 << 8192
                                 << u"/v1/chat/completions"_s << QString()
                                 << QStringList{u"authorization=Bearer KEY-openai"_s}
                                 << QStringList{u"model=\"gpt-4.1\""_s,
                                                u"messages.0.role=\"system\""_s,
                                                u"messages.0.content=\"SYS\""_s,
                                                u"messages.1.content=\"PROMPT\""_s,
                                                u"max_completion_tokens=8192"_s,
                                                u"temperature=0.7"_s,
                                                u"stream_options.include_usage=true"_s};
    QTest::newRow("openai chat, reasoning model")
        << u"openai@{base}/v1::o4-mini#chat"_s << true << QString() << 0 << 8192 << u"/v1/chat/completions"_s
        << QString() << QStringList{} << QStringList{u"reasoning_effort=\"medium\""_s, u"temperature=<absent>"_s};
    QTest::newRow("anthropic") << modelTemplate(u"anthropic"_s) << true << QString() << 0 << 8192 << u"/v1/messages"_s
                               << QString()
                               << QStringList{u"x-api-key=KEY-anthropic"_s, u"anthropic-version=2023-06-01"_s,
                                              u"authorization="_s}
                               << QStringList{u"model=\"claude-sonnet-4-5\""_s,
                                              u"system=\"SYS\""_s,
                                              u"messages.0.role=\"user\""_s,
                                              u"messages.0.content=\"PROMPT\""_s,
                                              u"max_tokens=8192"_s,
                                              u"temperature=0.7"_s,
                                              u"stream=true"_s,
                                              u"thinking=<absent>"_s};
    QTest::newRow("anthropic, thinking") << modelTemplate(u"anthropic"_s) << false << QString() << 4096 << 16000
                                         << u"/v1/messages"_s << QString() << QStringList{}
                                         << QStringList{u"thinking={\"budget_tokens\":4096,\"type\":\"enabled\"}"_s,
                                                        u"temperature=<absent>"_s, u"max_tokens=16000"_s,
                                                        u"stream=<absent>"_s};
    QTest::newRow("anthropic, streaming forced above 21k")
        << modelTemplate(u"anthropic"_s) << false << QString() << 0 << 32000 << u"/v1/messages"_s << QString()
        << QStringList{} << QStringList{u"max_tokens=32000"_s, u"stream=true"_s};
    QTest::newRow("gemini, streaming") << modelTemplate(u"gemini"_s) << true << QString() << 0 << 8192
                                       << u"/v1beta/models/gemini-2.5-pro:streamGenerateContent"_s << u"alt=sse"_s
                                       << QStringList{u"x-goog-api-key=KEY-gcp"_s, u"authorization="_s}
                                       << QStringList{u"contents.0.role=\"user\""_s,
                                                      u"contents.0.parts.0.text=\"PROMPT\""_s,
                                                      u"systemInstruction.parts.0.text=\"SYS\""_s,
                                                      u"generationConfig.maxOutputTokens=8192"_s,
                                                      u"generationConfig.temperature=0.7"_s,
                                                      u"model=<absent>"_s};
    QTest::newRow("gemini, thinking") << modelTemplate(u"gemini"_s) << false << QString() << 2048 << 8192
                                      << u"/v1beta/models/gemini-2.5-pro:generateContent"_s << QString()
                                      << QStringList{}
                                      << QStringList{u"generationConfig.thinkingConfig.thinkingBudget=2048"_s,
                                                     u"generationConfig.thinkingConfig.includeThoughts=true"_s};
    QTest::newRow("bedrock") << modelTemplate(u"bedrock"_s) << true << QString() << 0 << 4000
                             << u"/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"_s << QString()
                             << QStringList{u"authorization=Bearer KEY-aws"_s}
                             << QStringList{u"messages.0.role=\"user\""_s,
                                            u"messages.0.content.0.text=\"PROMPT\""_s,
                                            u"system.0.text=\"SYS\""_s,
                                            u"inferenceConfig.maxTokens=4000"_s,
                                            u"inferenceConfig.temperature=0.7"_s,
                                            u"stream=<absent>"_s,
                                            u"model=<absent>"_s};
}

void TestLlmProviders::requestShape()
{
    QFETCH(QString, model);
    QFETCH(bool, stream);
    QFETCH(QString, effort);
    QFETCH(int, thinking);
    QFETCH(int, maxTokens);
    QFETCH(QString, path);
    QFETCH(QString, query);
    QFETCH(QStringList, headers);
    QFETCH(QStringList, body);
    QVERIFY(loadScript("rules:\n  - cycle: true\n    responses: [{content: ok}]\n"));

    LlmRequest r = request(model, stream);
    r.reasoningEffort = effort;
    r.thinkingBudget = thinking;
    r.maxTokens = maxTokens;
    LlmReply *reply = sendAndWait(r);
    QVERIFY2(reply->response().ok, qPrintable(reply->response().error));
    QCOMPARE(reply->response().text, u"ok"_s);
    QCOMPARE(m_server->requestCount(), 1);
    const RecordedRequest sent = m_server->requests().first();
    QCOMPARE(sent.method, QByteArray("POST"));
    QCOMPARE(sent.path, path);
    QCOMPARE(sent.query, query);
    QCOMPARE(sent.header("content-type"), QByteArray("application/json"));
    for (const QString &header : headers) {
        const QString name = header.section(u'=', 0, 0);
        QCOMPARE(QString::fromUtf8(sent.header(name.toLatin1())), header.section(u'=', 1));
    }
    for (const QString &field : body) {
        const QString key = field.section(u'=', 0, 0);
        QCOMPARE(key + u'=' + jsonAt(sent.json, key), field);
    }
}

void TestLlmProviders::responseAndUsage_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<bool>("stream");
    QTest::addColumn<qint64>("reasoningTokens");
    QTest::addColumn<QString>("stopReason");

    // Anthropic and Bedrock count thinking inside output tokens without a separate figure.
    const QList<std::tuple<QString, qint64, QString>> rows{{u"responses"_s, 120, u"completed"_s},
                                                           {u"chat"_s, 120, u"stop"_s},
                                                           {u"anthropic"_s, 0, u"end_turn"_s},
                                                           {u"gemini"_s, 120, u"STOP"_s},
                                                           {u"bedrock"_s, 0, u"end_turn"_s}};
    for (const auto &[format, reasoning, stop] : rows)
        for (bool stream : {true, false}) {
            if (format == u"bedrock" && stream)
                continue;
            QTest::addRow("%s, %s", qPrintable(format), stream ? "streaming" : "whole body")
                << modelTemplate(format) << stream << reasoning << stop;
        }
}

void TestLlmProviders::responseAndUsage()
{
    QFETCH(QString, model);
    QFETCH(bool, stream);
    QFETCH(qint64, reasoningTokens);
    QFETCH(QString, stopReason);
    const QString content =
        u"Chosen optimization: tile the loops.\n```cpp\nint f() { return 42; } // \u00b5s \u2192 fast\n```"_s;
    QVERIFY(loadScript(
        "rules:\n  - responses:\n      - content: "
        + QJsonDocument(QJsonArray{content}).toJson(QJsonDocument::Compact).mid(1).chopped(1)
        + "\n        reasoning: \"The loop is memory bound.\"\n"
          "        usage: {prompt_tokens: 1000, completion_tokens: 300, reasoning_tokens: 120, cached_tokens: 400}\n"));
    LlmReply *reply = sendAndWait(request(model, stream));
    const LlmResponse &r = reply->response();
    QVERIFY2(r.ok, qPrintable(r.error));
    QCOMPARE(r.text, content);
    QCOMPARE(r.reasoning, u"The loop is memory bound."_s);
    QCOMPARE(r.tokensIn, qint64(1000));
    QCOMPARE(r.tokensOut, qint64(300));
    QCOMPARE(r.cachedTokens, qint64(400));
    QCOMPARE(r.reasoningTokens, reasoningTokens);
    QCOMPARE(r.stopReason, stopReason);
    QCOMPARE(r.retries, 0);
    QVERIFY(r.partial.isEmpty());
    // 600 uncached x $2 + 400 cached x $0.50 + 300 out x $10, per million.
    QCOMPARE(QString::number(r.usd, 'f', 6), u"0.004400"_s);
}

void TestLlmProviders::faults_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<bool>("stream");
    QTest::addColumn<QByteArray>("responses"); // YAML list items
    QTest::addColumn<int>("maxRetries"); // negative: that many, with llm.resend_billed
    QTest::addColumn<int>("idleMs");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<int>("requests");
    QTest::addColumn<QString>("errorContains");
    QTest::addColumn<bool>("partial");

    const QByteArray answer = "content: \"The answer is forty-two, computed with care and some patience.\"";
    struct Scenario
    {
        const char *name;
        QByteArray responses;
        int maxRetries;
        int idleMs;
        bool ok;
        int requests;
        QString errorContains;
        bool partialWhenStreaming;
    };
    const QList<Scenario> scenarios{
        {"429 with retry-after, then ok",
         "- {status: 429, error_message: \"Slow down\", headers: {retry-after: \"0\"}}\n- {" + answer + "}\n",
         2,
         0,
         true,
         2,
         {},
         false},
        {"500, then ok",
         "- {status: 500, error_message: \"Internal\", headers: {retry-after-ms: \"10\"}}\n- {" + answer + "}\n",
         2,
         0,
         true,
         2,
         {},
         false},
        {"529 overloaded, then ok",
         "- {status: 529, error_message: \"Overloaded\", headers: {retry-after-ms: \"10\"}}\n- {" + answer + "}\n",
         2,
         0,
         true,
         2,
         {},
         false},
        {"500 every time", "- {status: 500, error_message: \"Backend on fire\", headers: {retry-after-ms: \"10\"}}\n",
         1, 0, false, 2, u"Backend on fire"_s, false},
        {"400 is not retried", "- {status: 400, error_message: \"Bad model name\"}\n", 3, 0, false, 1,
         u"Bad model name"_s, false},
        {"error event, then ok",
         "- {" + answer + ", fault: error_event, error_message: \"Overloaded right now\"}\n- {" + answer + "}\n",
         2,
         0,
         true,
         2,
         {},
         false},
        {"error event every time", "- {" + answer + ", fault: error_event, error_message: \"Overloaded right now\"}\n",
         1, 0, false, 2, u"Overloaded right now"_s, true},
        // A broken answer may have been billed: not sent again unless llm.resend_billed says so (negative retries
        // below).
        {"reset mid-stream, not resent", "- {" + answer + ", fault: reset_mid_stream}\n- {" + answer + "}\n", 2, 0,
         false, 1, u"may have billed"_s, true},
        {"reset mid-stream, resend_billed, then ok",
         "- {" + answer + ", fault: reset_mid_stream}\n- {" + answer + "}\n",
         -2,
         0,
         true,
         2,
         {},
         false},
        {"reset mid-stream every time, resend_billed",
         "- {" + answer + ", fault: reset_mid_stream}\n",
         -1,
         0,
         false,
         2,
         {},
         true},
        {"malformed JSON, not resent", "- {" + answer + ", fault: malformed_json}\n- {" + answer + "}\n", 2, 0, false,
         1, u"malformed"_s, true},
        {"malformed JSON, resend_billed, then ok",
         "- {" + answer + ", fault: malformed_json}\n- {" + answer + "}\n",
         -2,
         0,
         true,
         2,
         {},
         false},
        {"closed before the answer, not resent", "- {" + answer + ", fault: close_before_answer}\n- {" + answer + "}\n",
         2, 0, false, 1, u"may have billed"_s, false},
        {"drip", "- {" + answer + ", fault: drip, chunk_delay_ms: 2}\n", 0, 0, true, 1, {}, false},
        {"never ends", "- {" + answer + ", fault: never_end}\n", 0, 400, false, 1, u"idle timeout"_s, true},
    };
    for (const QString &format : formats())
        for (bool stream : {true, false}) {
            if (format == u"bedrock" && stream)
                continue;
            for (const Scenario &s : scenarios)
                QTest::addRow("%s, %s: %s", qPrintable(format), stream ? "streaming" : "whole body", s.name)
                    << modelTemplate(format) << stream << s.responses << s.maxRetries << s.idleMs << s.ok << s.requests
                    << s.errorContains << (s.partialWhenStreaming && stream);
        }
}

void TestLlmProviders::closeAfterEveryAnswer_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<bool>("stream");
    QTest::addColumn<int>("mode");
    QTest::addColumn<bool>("viaProxy");
    for (const QString &format : formats())
        for (bool stream : {true, false}) {
            if (format == u"bedrock" && stream)
                continue; // Bedrock's ConverseStream (binary event stream) is not spoken by the local server
            for (const auto &[mode, modeName] :
                 {std::pair{FakeLlmServer::CloseAfterAnswer::Delimited, "close-delimited"},
                  std::pair{FakeLlmServer::CloseAfterAnswer::Framed, "framed, then closed"}})
                for (bool viaProxy : {false, true}) {
                    // Framed and closed behind a proxy is a race no client can win: the proxy may take the next
                    // request whole before it sees the close, and such a request may have been billed (the
                    // client says so rather than send it again).
                    if (mode == FakeLlmServer::CloseAfterAnswer::Framed && viaProxy)
                        continue;
                    QTest::addRow("%s, %s, %s, %s", qPrintable(format), stream ? "streaming" : "whole body", modeName,
                                  viaProxy ? "through tinyproxy" : "direct")
                        << modelTemplate(format) << stream << int(mode) << viaProxy;
                }
        }
}

// A healthy peer that ends every answer by closing the connection (valid HTTP/1.x): every answer that
// arrived whole is kept, a 500 or an error event before one does not cost it, and the tokens are the sum
// of what the server reported. Six requests, three at a time, so connections are opened, closed and reused under each
// other.
void TestLlmProviders::closeAfterEveryAnswer()
{
    QFETCH(QString, model);
    QFETCH(bool, stream);
    QFETCH(int, mode);
    QFETCH(bool, viaProxy);
    test::TinyProxy proxy;
    if (viaProxy) {
        QString why;
        if (!proxy.start(&why))
            QSKIP(qPrintable(why));
        QVERIFY2(m_client->setProxy(proxy.url(), &why), qPrintable(why));
    }
    m_server->setCloseAfterAnswer(FakeLlmServer::CloseAfterAnswer(mode));
    const QByteArray answer = "{content: \"The answer is forty-two, computed with care.\", usage: {prompt_tokens: 100, "
                              "completion_tokens: 7}}";
    QVERIFY(loadScript("rules:\n  - cycle: true\n    responses:\n"
                       "      - {status: 500, error_message: \"Internal\", headers: {retry-after-ms: \"10\"}}\n"
                       "      - "
                       + answer + "\n      - " + answer
                       + "\n"
                         "      - {content: \"half\", fault: error_event, error_message: \"Overloaded right now\"}\n"));
    m_client->setMaxRetries(6); // two of every four answers are errors: a request may meet several in a row
    m_client->setMaxInFlightPerProvider(3);
    QList<LlmReply *> replies;
    for (int i = 0; i < 6; ++i)
        replies << m_client->send(request(model, stream));
    qint64 tokensIn = 0, tokensOut = 0;
    for (LlmReply *reply : std::as_const(replies)) {
        QVERIFY(waitFor(reply));
        const LlmResponse &r = reply->response();
        QVERIFY2(r.ok, qPrintable(r.error + u" | attempts: "_s + r.attempts.join(u"; "_s)));
        QCOMPARE(r.text, u"The answer is forty-two, computed with care."_s);
        tokensIn += r.tokensIn;
        tokensOut += r.tokensOut;
        reply->deleteLater();
    }
    // Every answer the server wrote was kept: 6 answers (the 500s and the error events cost nothing and
    // were sent again).
    int answered = 0;
    for (const auto &recorded : m_server->requests())
        answered += recorded.responseIndex == 1 || recorded.responseIndex == 2;
    QCOMPARE(answered, 6);
    QCOMPARE(tokensIn, qint64(600));
    QCOMPARE(tokensOut, qint64(42));
    QCOMPARE(m_client->inFlight(), 0);
}

void TestLlmProviders::cutAtTheTokenLimit_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<bool>("stream");
    QTest::addColumn<QString>("stopReason");
    const QMap<QString, QString> reasons{{u"responses"_s, u"max_output_tokens"_s},
                                         {u"chat"_s, u"length"_s},
                                         {u"anthropic"_s, u"max_tokens"_s},
                                         {u"gemini"_s, u"MAX_TOKENS"_s},
                                         {u"bedrock"_s, u"max_tokens"_s}};
    for (const QString &format : formats())
        for (bool stream : {true, false}) {
            if (format == u"bedrock" && stream)
                continue;
            QTest::addRow("%s, %s", qPrintable(format), stream ? "streaming" : "whole body")
                << modelTemplate(format) << stream << reasons.value(format);
        }
}

// An answer the provider stopped at the output-token limit is an answer (billed, kept, not sent again),
// marked as cut in each format's own words, so whoever reads it can say why it ends where it does.
void TestLlmProviders::cutAtTheTokenLimit()
{
    QFETCH(QString, model);
    QFETCH(bool, stream);
    QFETCH(QString, stopReason);
    QVERIFY(loadScript("rules:\n  - responses:\n      - {content: \"```cpp\\nvoid kernel() {\\n  for (int i = 0;\", "
                       "cut_at_limit: true, "
                       "usage: {prompt_tokens: 10, completion_tokens: 8192}}\n"));
    LlmRequest r = request(model, stream);
    r.maxTokens = 8192;
    LlmReply *reply = sendAndWait(r);
    const LlmResponse &response = reply->response();
    QVERIFY2(response.ok, qPrintable(response.error));
    QCOMPARE(response.text, u"```cpp\nvoid kernel() {\n  for (int i = 0;"_s);
    QCOMPARE(response.stopReason, stopReason);
    QVERIFY(response.cutAtTokenLimit());
    QCOMPARE(response.tokensOut, qint64(8192));
    QCOMPARE(m_server->requestCount(), 1);
    QCOMPARE(response.retries, 0);
}

void TestLlmProviders::faults()
{
    QFETCH(QString, model);
    QFETCH(bool, stream);
    QFETCH(QByteArray, responses);
    QFETCH(int, maxRetries);
    QFETCH(int, idleMs);
    QFETCH(bool, ok);
    QFETCH(int, requests);
    QFETCH(QString, errorContains);
    QFETCH(bool, partial);
    QVERIFY(loadScript("rules:\n  - cycle: true\n    responses:\n" + indent(responses, 6)));
    m_client->setMaxRetries(std::abs(maxRetries));
    m_client->setResendBilled(maxRetries < 0);
    if (idleMs > 0)
        m_client->setIdleTimeoutMs(idleMs);

    LlmReply *reply = sendAndWait(request(model, stream));
    const LlmResponse &r = reply->response();
    QCOMPARE(r.ok, ok);
    QCOMPARE(m_server->requestCount(), requests);
    QCOMPARE(r.retries, requests - 1);
    if (ok) {
        QCOMPARE(r.text, u"The answer is forty-two, computed with care and some patience."_s);
        QVERIFY(r.error.isEmpty());
        QVERIFY(r.partial.isEmpty());
    } else {
        QVERIFY(r.text.isEmpty());
        QVERIFY(!r.error.isEmpty());
        QVERIFY2(r.error.contains(errorContains), qPrintable(r.error));
        // What arrived before the stream broke is kept apart from the (empty) answer.
        QCOMPARE(!r.partial.isEmpty(), partial);
        if (partial)
            QVERIFY2(u"The answer is forty-two, computed with care and some patience."_s.startsWith(r.partial),
                     qPrintable(r.partial));
    }
    QCOMPARE(m_client->inFlight(), 0);
}

void TestLlmProviders::unsupportedParameterIsDropped_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("parameter");

    QTest::newRow("openai responses") << modelTemplate(u"responses"_s)
                                      << u"Unsupported parameter: 'temperature' is not supported with this model."_s
                                      << u"temperature"_s;
    QTest::newRow("openai chat, unsupported value")
        << modelTemplate(u"chat"_s)
        << u"Unsupported value: 'temperature' does not support 0.7 with this model. Only the "
           "default (1) value is supported."_s
        << u"temperature"_s;
    QTest::newRow("anthropic") << modelTemplate(u"anthropic"_s) << u"temperature: Extra inputs are not permitted"_s
                               << u"temperature"_s;
    QTest::newRow("gemini")
        << modelTemplate(u"gemini"_s)
        << u"Invalid JSON payload received. Unknown name \"temperature\" at 'generation_config': Cannot find field."_s
        << u"generationConfig.temperature"_s;
    QTest::newRow("bedrock") << modelTemplate(u"bedrock"_s) << u"Unsupported parameter: 'inferenceConfig.temperature'"_s
                             << u"inferenceConfig.temperature"_s;
}

void TestLlmProviders::unsupportedParameterIsDropped()
{
    QFETCH(QString, model);
    QFETCH(QString, message);
    QFETCH(QString, parameter);
    QVERIFY(loadScript("rules:\n  - responses:\n      - {status: 400, error_message: "
                       + QJsonDocument(QJsonArray{message}).toJson().trimmed().mid(1).chopped(1)
                       + "}\n      - {content: first}\n      - {content: second}\n"));
    m_client->setMaxRetries(0); // the drop is not a retry: it must work even with none allowed

    LlmReply *first = sendAndWait(request(model, false));
    QVERIFY2(first->response().ok, qPrintable(first->response().error));
    QCOMPARE(first->response().text, u"first"_s);
    QCOMPARE(first->response().retries, 0);
    QCOMPARE(first->response().droppedParameters, QStringList{parameter});
    QCOMPARE(m_server->requestCount(), 2);
    const QList<RecordedRequest> sent = m_server->requests();
    QVERIFY(jsonAt(sent.at(0).json, parameter) != u"<absent>"_s);
    QCOMPARE(jsonAt(sent.at(1).json, parameter), u"<absent>"_s);

    // Remembered for the model: the next request leaves it out from the start.
    LlmReply *second = sendAndWait(request(model, false));
    QCOMPARE(second->response().text, u"second"_s);
    QCOMPARE(m_server->requestCount(), 3);
    QCOMPARE(jsonAt(m_server->requests().at(2).json, parameter), u"<absent>"_s);
}

void TestLlmProviders::unsupportedParameterName_data()
{
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("parameter");
    QTest::newRow("openai parameter")
        << u"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."_s
        << u"max_tokens"_s;
    QTest::newRow("openai nested") << u"Unsupported parameter: 'reasoning.effort' is not supported with this model."_s
                                   << u"reasoning.effort"_s;
    QTest::newRow("anthropic") << u"top_k: Extra inputs are not permitted"_s << u"top_k"_s;
    QTest::newRow("gemini top level") << u"Invalid JSON payload received. Unknown name \"foo\": Cannot find field."_s
                                      << u"foo"_s;
    QTest::newRow("unrelated") << u"Invalid model: gpt-7"_s << QString();
    QTest::newRow("rate limit") << u"Rate limit reached for requests"_s << QString();
}

void TestLlmProviders::unsupportedParameterName()
{
    QFETCH(QString, message);
    QFETCH(QString, parameter);
    QCOMPARE(LlmClient::unsupportedParameter(message), parameter);
}

void TestLlmProviders::vertexUsesGcloudToken()
{
    QTemporaryDir dir;
    const QString gcloud = dir.filePath(u"gcloud"_s);
    const QString calls = dir.filePath(u"calls"_s);
    {
        QFile script(gcloud);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("#!/bin/sh\necho called >> '" + calls.toUtf8()
                     + "'\n[ \"$1 $2\" = \"auth print-access-token\" ] || exit 3\n"
                       "echo 'Updates are available for some Google Cloud CLI components.'\necho ya29.fake-token\n");
    }
    QVERIFY(QFile::setPermissions(gcloud, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    qputenv("GOOGLE_CLOUD_PROJECT", "my-project");
    m_client->setGcloudProgram(gcloud);
    QVERIFY(loadScript("rules:\n  - cycle: true\n    responses: [{content: from vertex}]\n"));

    const QString model =
        u"gcp@{base}/v1/projects/my-project/locations/us-central1/publishers/google::gemini-2.5-pro"_s;
    LlmReply *first = sendAndWait(request(model, false));
    QVERIFY2(first->response().ok, qPrintable(first->response().error));
    QCOMPARE(first->response().text, u"from vertex"_s);
    LlmReply *second = sendAndWait(request(model, true));
    QVERIFY2(second->response().ok, qPrintable(second->response().error));

    QCOMPARE(m_server->requestCount(), 2);
    const RecordedRequest sent = m_server->requests().first();
    QCOMPARE(
        sent.path,
        u"/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent"_s);
    QCOMPARE(sent.header("authorization"), QByteArray("Bearer ya29.fake-token"));
    QCOMPARE(sent.header("x-goog-api-key"), QByteArray());
    QCOMPARE(
        m_server->requests().at(1).path,
        u"/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent"_s);
    // The token is cached: gcloud ran once for both requests.
    QFile log(calls);
    QVERIFY(log.open(QIODevice::ReadOnly));
    QCOMPARE(log.readAll(), QByteArray("called\n"));
}

void TestLlmProviders::vertexWithoutGcloudFailsClearly()
{
    qputenv("GOOGLE_CLOUD_PROJECT", "my-project");
    m_client->setGcloudProgram(u"/nonexistent/bin/gcloud"_s);
    QVERIFY(loadScript("rules:\n  - cycle: true\n    responses: [{content: unreachable}]\n"));
    LlmReply *reply = sendAndWait(request(modelTemplate(u"gemini"_s), false));
    QVERIFY(!reply->response().ok);
    QVERIFY2(reply->response().error.contains(u"could not be started"_s), qPrintable(reply->response().error));
    QVERIFY2(reply->response().error.contains(u"GEMINI_API_KEY"_s), qPrintable(reply->response().error));
    QCOMPARE(m_server->requestCount(), 0);
    QCOMPARE(m_client->inFlight(), 0);
}

void TestLlmProviders::vertexDefaultBaseUrl()
{
    QString error;
    QCOMPARE(ModelSpec::parse(u"gcp::gemini-2.5-pro"_s, &error)->baseUrl.toString(),
             u"https://generativelanguage.googleapis.com/v1beta"_s);
    qputenv("GOOGLE_CLOUD_PROJECT", "proj-1");
    QCOMPARE(
        ModelSpec::parse(u"gcp::gemini-2.5-pro"_s, &error)->baseUrl.toString(),
        u"https://us-central1-aiplatform.googleapis.com/v1/projects/proj-1/locations/us-central1/publishers/google"_s);
    qputenv("GOOGLE_CLOUD_LOCATION", "europe-west4");
    QCOMPARE(
        ModelSpec::parse(u"gcp::gemini-2.5-pro"_s, &error)->baseUrl.toString(),
        u"https://europe-west4-aiplatform.googleapis.com/v1/projects/proj-1/locations/europe-west4/publishers/google"_s);
    qputenv("AWS_REGION", "eu-central-1");
    QCOMPARE(ModelSpec::parse(u"aws::anthropic.claude-x"_s, &error)->baseUrl.toString(),
             u"https://bedrock-runtime.eu-central-1.amazonaws.com"_s);
}

void TestLlmProviders::bedrockSigV4()
{
    m_awsKey.clear();
    qputenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE");
    qputenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    qputenv("AWS_SESSION_TOKEN", "session-token-1");
    qputenv("AWS_REGION", "eu-west-1");
    QVERIFY(loadScript("rules:\n  - responses: [{content: signed}]\n"));
    LlmReply *reply = sendAndWait(request(modelTemplate(u"bedrock"_s), false));
    QVERIFY2(reply->response().ok, qPrintable(reply->response().error));
    const RecordedRequest sent = m_server->requests().first();
    const QByteArray authorization = sent.header("authorization");
    QVERIFY2(authorization.startsWith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"), authorization.constData());
    QVERIFY2(authorization.contains("/eu-west-1/bedrock/aws4_request"), authorization.constData());
    QVERIFY2(authorization.contains("Signature="), authorization.constData());
    QCOMPARE(sent.header("x-amz-security-token"), QByteArray("session-token-1"));
    QCOMPARE(sent.header("x-amz-date").size(), qsizetype(16));
}

void TestLlmProviders::bedrockWithoutCredentialsFailsClearly()
{
    m_awsKey.clear();
    QVERIFY(loadScript("rules:\n  - responses: [{content: unreachable}]\n"));
    LlmReply *reply = sendAndWait(request(modelTemplate(u"bedrock"_s), false));
    QVERIFY(!reply->response().ok);
    QVERIFY2(reply->response().error.contains(u"AWS_BEARER_TOKEN_BEDROCK"_s), qPrintable(reply->response().error));
    QCOMPARE(m_server->requestCount(), 0);
}

void TestLlmProviders::modelSpecApiSuffix_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("wireFormat"); // empty: a parse error
    QTest::addColumn<QString>("model");
    QTest::newRow("openai default") << u"openai::gpt-5.2"_s << u"openai-responses"_s << u"gpt-5.2"_s;
    QTest::newRow("openai chat") << u"openai::gpt-4o#chat"_s << u"openai-chat"_s << u"gpt-4o"_s;
    QTest::newRow("openai responses explicit") << u"openai::gpt-4o#responses"_s << u"openai-responses"_s << u"gpt-4o"_s;
    QTest::newRow("bare name with suffix") << u"gpt-4o#chat"_s << u"openai-chat"_s << u"gpt-4o"_s;
    QTest::newRow("anthropic") << u"anthropic::claude-opus-4-5"_s << u"anthropic-messages"_s << u"claude-opus-4-5"_s;
    QTest::newRow("gcp") << u"gcp::gemini-2.5-pro"_s << u"gemini"_s << u"gemini-2.5-pro"_s;
    QTest::newRow("aws") << u"aws::us.anthropic.claude-sonnet-4-5-20250929-v1:0"_s << u"bedrock-converse"_s
                         << u"us.anthropic.claude-sonnet-4-5-20250929-v1:0"_s;
    QTest::newRow("together") << u"together::Qwen/Qwen3-Coder"_s << u"openai-chat"_s << u"Qwen/Qwen3-Coder"_s;
    QTest::newRow("vllm") << u"vllm::m"_s << u"openai-chat"_s << u"m"_s;
    QTest::newRow("suffix on anthropic") << u"anthropic::claude#chat"_s << QString() << QString();
    QTest::newRow("unknown suffix") << u"openai::gpt-4o#batch"_s << QString() << QString();
}

void TestLlmProviders::modelSpecApiSuffix()
{
    QFETCH(QString, text);
    QFETCH(QString, wireFormat);
    QFETCH(QString, model);
    QString error;
    const auto spec = ModelSpec::parse(text, &error);
    if (wireFormat.isEmpty()) {
        QVERIFY(!spec);
        QVERIFY2(error.contains(u"#"_s), qPrintable(error));
        return;
    }
    QVERIFY2(spec, qPrintable(error));
    QCOMPARE(spec->wireFormat(), wireFormat);
    QCOMPARE(spec->model, model);
}

void TestLlmProviders::priceTableLookup_data()
{
    QTest::addColumn<QString>("provider");
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("usd"); // for 1M in (200k cached), 100k out; "none" when unpriced
    QTest::newRow("exact") << u"openai"_s << u"gpt-5"_s << u"1.000000"_s;
    QTest::newRow("dated snapshot") << u"openai"_s << u"gpt-5-2025-08-07"_s << u"1.000000"_s;
    QTest::newRow("longest prefix wins") << u"openai"_s << u"gpt-5-mini-2025-08-07"_s << u"0.100000"_s;
    QTest::newRow("no cache price: input price") << u"together"_s << u"deepseek-ai/DeepSeek-V3"_s << u"1.375000"_s;
    QTest::newRow("other provider, same name") << u"vllm"_s << u"gpt-5"_s << u"none"_s;
    QTest::newRow("unknown") << u"anthropic"_s << u"claude-9"_s << u"none"_s;
}

void TestLlmProviders::priceTableLookup()
{
    QFETCH(QString, provider);
    QFETCH(QString, model);
    QFETCH(QString, usd);
    QString error;
    const auto table = PriceTable::parse("as_of: 2026-06-30\nmodels:\n"
                                         "  openai::gpt-5: {input: 0.5, output: 5, cached_input: 0.5}\n"
                                         "  openai::gpt-5-mini: {input: 0.05, output: 0.5, cached_input: 0.05}\n"
                                         "  together::deepseek-ai/DeepSeek-V3: {input: 1.25, output: 1.25}\n",
                                         &error);
    QVERIFY2(table, qPrintable(error));
    QCOMPARE(table->asOf(), QDate(2026, 6, 30));
    const auto cost = table->cost(provider, model, 1000000, 100000, 200000);
    QCOMPARE(cost ? QString::number(*cost, 'f', 6) : u"none"_s, usd);
}

void TestLlmProviders::shippedPriceTable()
{
    const QString path = qEnvironmentVariable("AUTOCOMP_DATA_DIR") + u"/resources/prices.yaml"_s;
    QFile file(path);
    QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(path));
    QString error;
    const auto table = PriceTable::parse(file.readAll(), &error);
    QVERIFY2(table, qPrintable(error));
    QVERIFY(table->asOf().isValid());
    QVERIFY(table->size() >= 20);
    for (const auto &[provider, model] :
         QList<std::pair<QString, QString>>{{u"openai"_s, u"gpt-5.2"_s},
                                            {u"anthropic"_s, u"claude-opus-4-5-20251101"_s},
                                            {u"gcp"_s, u"gemini-2.5-pro"_s},
                                            {u"aws"_s, u"us.anthropic.claude-sonnet-4-5-20250929-v1:0"_s}})
        QVERIFY2(table->price(provider, model), qPrintable(provider + u"::"_s + model));
    // Bad tables are rejected with a reason.
    QVERIFY(!PriceTable::parse("models: {}\n", &error));
    QVERIFY2(error.contains(u"as_of"_s), qPrintable(error));
    QVERIFY(!PriceTable::parse("as_of: 2026-01-01\nmodels:\n  gpt-5: {input: 1, output: 2}\n", &error));
    QVERIFY2(error.contains(u"provider::model"_s), qPrintable(error));
    QVERIFY(!PriceTable::parse("as_of: 2026-01-01\nmodels:\n  openai::x: {input: -1, output: 2}\n", &error));
    QVERIFY2(error.contains(u"negative"_s), qPrintable(error));
}

void TestLlmProviders::userPriceTableShadowsShipped()
{
    QTemporaryDir home;
    const QByteArray oldHome = qgetenv("XDG_DATA_HOME");
    qputenv("XDG_DATA_HOME", home.path().toUtf8());
    QVERIFY(QDir().mkpath(home.filePath(u"autocomp-workbench"_s)));
    QFile user(home.filePath(u"autocomp-workbench/prices.yaml"_s));
    QVERIFY(user.open(QIODevice::WriteOnly));
    user.write("as_of: 2026-11-01\nmodels:\n  openai::gpt-5.2: {input: 100, output: 100}\n");
    user.close();

    QString source;
    QString error;
    const PriceTable table = PriceTable::loadDefault(&source, &error);
    if (oldHome.isEmpty())
        qunsetenv("XDG_DATA_HOME");
    else
        qputenv("XDG_DATA_HOME", oldHome);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(source, user.fileName());
    QCOMPARE(table.size(), 1);
    QCOMPARE(QString::number(*table.cost(u"openai"_s, u"gpt-5.2"_s, 10000, 0, 0), 'f', 2), u"1.00"_s);
}

QTEST_GUILESS_MAIN(TestLlmProviders)
#include "tst_llm_providers.moc"
