#include "llm/model_spec.h"

#include <QStringList>

namespace autocomp {

namespace {
const QStringList &knownProviders()
{
    static const QStringList s_providers{
        QStringLiteral("openai"), QStringLiteral("anthropic"),  QStringLiteral("aws"),
        QStringLiteral("gcp"),    QStringLiteral("together"),   QStringLiteral("vllm"),
        QStringLiteral("ollama"), QStringLiteral("openrouter"), QStringLiteral("openai-compatible")};
    return s_providers;
}
} // namespace

QString ModelSpec::inferProvider(const QString &model)
{
    const QString m = model.toLower();
    if (m.startsWith(QLatin1String("gpt")) || m.startsWith(QLatin1String("o1")) || m.startsWith(QLatin1String("o3"))
        || m.startsWith(QLatin1String("o4")) || m.startsWith(QLatin1String("chatgpt")))
        return QStringLiteral("openai");
    if (m.startsWith(QLatin1String("claude")))
        return QStringLiteral("anthropic");
    if (m.startsWith(QLatin1String("gemini")))
        return QStringLiteral("gcp");
    if (m.startsWith(QLatin1String("us.")) || m.startsWith(QLatin1String("anthropic."))
        || m.startsWith(QLatin1String("amazon.")) || m.startsWith(QLatin1String("meta.")))
        return QStringLiteral("aws");
    if (m.contains(QLatin1Char('/')))
        return QStringLiteral("together");
    return {};
}

QUrl ModelSpec::defaultBaseUrl(const QString &provider)
{
    auto env = [](const char *name) { return qEnvironmentVariable(name); };
    if (provider == QLatin1String("openai")) {
        const QString e = env("OPENAI_BASE_URL");
        return QUrl(e.isEmpty() ? QStringLiteral("https://api.openai.com/v1") : e);
    }
    if (provider == QLatin1String("anthropic")) {
        const QString e = env("ANTHROPIC_BASE_URL");
        return QUrl(e.isEmpty() ? QStringLiteral("https://api.anthropic.com") : e);
    }
    if (provider == QLatin1String("vllm")) {
        const QString e = env("VLLM_API_BASE");
        return QUrl(e.isEmpty() ? QStringLiteral("http://localhost:8000/v1") : e);
    }
    if (provider == QLatin1String("ollama"))
        return QUrl(QStringLiteral("http://localhost:11434/v1"));
    if (provider == QLatin1String("together"))
        return QUrl(QStringLiteral("https://api.together.xyz/v1"));
    if (provider == QLatin1String("openrouter"))
        return QUrl(QStringLiteral("https://openrouter.ai/api/v1"));
    if (provider == QLatin1String("gcp")) {
        if (useVertex()) {
            const QString location = env("GOOGLE_CLOUD_LOCATION").isEmpty() ? QStringLiteral("us-central1")
                                                                            : env("GOOGLE_CLOUD_LOCATION");
            // The global endpoint has no location prefix in its host.
            const QString host = location == QLatin1String("global")
                ? QStringLiteral("aiplatform.googleapis.com")
                : location + QStringLiteral("-aiplatform.googleapis.com");
            return QUrl(QStringLiteral("https://%1/v1/projects/%2/locations/%3/publishers/google")
                            .arg(host, env("GOOGLE_CLOUD_PROJECT"), location));
        }
        return QUrl(QStringLiteral("https://generativelanguage.googleapis.com/v1beta"));
    }
    if (provider == QLatin1String("aws")) {
        const QString e = env("AWS_BEDROCK_BASE_URL");
        if (!e.isEmpty())
            return QUrl(e);
        return QUrl(QStringLiteral("https://bedrock-runtime.%1.amazonaws.com").arg(awsRegion()));
    }
    return {};
}

bool ModelSpec::useVertex() { return !qEnvironmentVariableIsEmpty("GOOGLE_CLOUD_PROJECT"); }

QString ModelSpec::awsRegion()
{
    for (const char *name : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
        QString region = qEnvironmentVariable(name);
        if (!region.isEmpty())
            return region;
    }
    return QStringLiteral("us-west-2");
}

QString ModelSpec::apiKeyVariable(const QString &provider)
{
    if (provider == QLatin1String("openai"))
        return QStringLiteral("OPENAI_API_KEY");
    if (provider == QLatin1String("anthropic"))
        return QStringLiteral("ANTHROPIC_API_KEY");
    if (provider == QLatin1String("together"))
        return QStringLiteral("TOGETHER_API_KEY");
    if (provider == QLatin1String("openrouter"))
        return QStringLiteral("OPENROUTER_API_KEY");
    if (provider == QLatin1String("gcp"))
        return QStringLiteral("GEMINI_API_KEY");
    if (provider == QLatin1String("aws"))
        return QStringLiteral("AWS_BEARER_TOKEN_BEDROCK");
    if (provider == QLatin1String("vllm")) // optional: for servers started with --api-key
        return QStringLiteral("VLLM_API_KEY");
    return {};
}

QString ModelSpec::wireFormat() const
{
    if (provider == QLatin1String("anthropic"))
        return QStringLiteral("anthropic-messages");
    if (provider == QLatin1String("aws"))
        return QStringLiteral("bedrock-converse");
    if (provider == QLatin1String("gcp"))
        return QStringLiteral("gemini");
    if (provider == QLatin1String("openai") && api != QLatin1String("chat"))
        return QStringLiteral("openai-responses");
    return QStringLiteral("openai-chat");
}

std::optional<ModelSpec> ModelSpec::parse(const QString &text, QString *error)
{
    ModelSpec spec;
    spec.text = text.trimmed();
    // The first "::" outside brackets: an IPv6 literal in the base URL ("vllm@http://[::1]:8000/v1::m") has its own.
    qsizetype sep = -1;
    for (qsizetype i = 0, depth = 0; i + 1 < spec.text.size(); ++i) {
        const QChar c = spec.text.at(i);
        if (c == QLatin1Char('['))
            ++depth;
        else if (c == QLatin1Char(']'))
            depth = std::max<qsizetype>(0, depth - 1);
        else if (depth == 0 && c == QLatin1Char(':') && spec.text.at(i + 1) == QLatin1Char(':')) {
            sep = i;
            break;
        }
    }
    if (sep < 0) {
        spec.model = spec.text;
        spec.provider = inferProvider(spec.model);
        if (spec.provider.isEmpty()) {
            if (error)
                *error = QStringLiteral(
                             "model '%1': cannot infer the provider; write it as provider::model (providers: %2)")
                             .arg(text, knownProviders().join(QLatin1String(", ")));
            return std::nullopt;
        }
    } else {
        QString provider = spec.text.left(sep);
        spec.model = spec.text.mid(sep + 2);
        const qsizetype at = provider.indexOf(QLatin1Char('@'));
        if (at >= 0) {
            spec.baseUrl = QUrl(provider.mid(at + 1), QUrl::StrictMode);
            provider = provider.left(at);
            if (!spec.baseUrl.isValid() || spec.baseUrl.scheme().isEmpty() || spec.baseUrl.host().isEmpty()) {
                if (error)
                    *error = QStringLiteral("model '%1': '%2' is not a valid base URL")
                                 .arg(text, spec.text.mid(at + 1, sep - at - 1));
                return std::nullopt;
            }
        }
        spec.provider = provider;
    }
    if (!knownProviders().contains(spec.provider)) {
        if (error)
            *error = QStringLiteral("model '%1': unknown provider '%2' (known: %3)")
                         .arg(text, spec.provider, knownProviders().join(QLatin1String(", ")));
        return std::nullopt;
    }
    const qsizetype hash = spec.model.lastIndexOf(QLatin1Char('#'));
    if (hash >= 0) {
        spec.api = spec.model.mid(hash + 1);
        spec.model.truncate(hash);
        if (spec.provider != QLatin1String("openai")
            || (spec.api != QLatin1String("chat") && spec.api != QLatin1String("responses"))) {
            if (error)
                *error = QStringLiteral(
                             "model '%1': unknown API suffix '#%2' (openai:: models take #chat or #responses)")
                             .arg(text, spec.api);
            return std::nullopt;
        }
    }
    if (spec.model.isEmpty()) {
        if (error)
            *error = QStringLiteral("model '%1': the model name is empty").arg(text);
        return std::nullopt;
    }
    if (spec.provider == QLatin1String("openai-compatible") && spec.baseUrl.isEmpty()) {
        if (error)
            *error = QStringLiteral(
                         "model '%1': openai-compatible needs a base URL: openai-compatible@http://host:port/v1::model")
                         .arg(text);
        return std::nullopt;
    }
    if (spec.baseUrl.isEmpty())
        spec.baseUrl = defaultBaseUrl(spec.provider);
    return spec;
}

} // namespace autocomp
