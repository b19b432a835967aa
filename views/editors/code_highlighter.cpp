#include "editors/code_highlighter.h"

#include "editors/builtin_highlighter.h"
#include "common/status_palette.h"

#include <QCoreApplication>
#include <QEvent>
#include <QGuiApplication>
#include <QPointer>
#include <QPalette>
#include <QSyntaxHighlighter>
#include <QTextDocument>

#ifdef AUTOCOMP_HAVE_KSYNTAXHIGHLIGHTING
#include <KSyntaxHighlighting/Definition>
#include <KSyntaxHighlighting/Repository>
#include <KSyntaxHighlighting/SyntaxHighlighter>
#include <KSyntaxHighlighting/Theme>
#endif

namespace autocomp {

namespace {

// Normalizes language names and file extensions to one of ours.
QString canonicalLanguage(const QString &language)
{
    const QString name = language.trimmed().toLower();
    if (name == QLatin1String("cpp") || name == QLatin1String("c++") || name == QLatin1String("cc")
        || name == QLatin1String("cxx") || name == QLatin1String("hpp") || name == QLatin1String("h"))
        return QStringLiteral("cpp");
    if (name == QLatin1String("c"))
        return QStringLiteral("c");
    if (name == QLatin1String("cuda") || name == QLatin1String("cu") || name == QLatin1String("cuh"))
        return QStringLiteral("cuda");
    if (name == QLatin1String("python") || name == QLatin1String("py") || name == QLatin1String("nki")
        || name == QLatin1String("pallas"))
        return QStringLiteral("python");
    if (name == QLatin1String("markdown") || name == QLatin1String("md"))
        return QStringLiteral("markdown");
    if (name == QLatin1String("yaml") || name == QLatin1String("yml"))
        return QStringLiteral("yaml");
    return {};
}

#ifdef AUTOCOMP_HAVE_KSYNTAXHIGHLIGHTING
KSyntaxHighlighting::Repository &repository()
{
    static KSyntaxHighlighting::Repository s_repository;
    return s_repository;
}

QString fileNameFor(const QString &language)
{
    if (language == QLatin1String("cpp"))
        return QStringLiteral("code.cpp");
    if (language == QLatin1String("c"))
        return QStringLiteral("code.c");
    if (language == QLatin1String("cuda"))
        return QStringLiteral("code.cu");
    if (language == QLatin1String("python"))
        return QStringLiteral("code.py");
    if (language == QLatin1String("markdown"))
        return QStringLiteral("text.md");
    return QStringLiteral("config.yaml");
}
#else
BuiltinHighlighter::Language builtinLanguage(const QString &language)
{
    if (language == QLatin1String("python"))
        return BuiltinHighlighter::Python;
    if (language == QLatin1String("markdown"))
        return BuiltinHighlighter::Markdown;
    if (language == QLatin1String("yaml"))
        return BuiltinHighlighter::Yaml;
    if (language == QLatin1String("cuda"))
        return BuiltinHighlighter::Cuda;
    return BuiltinHighlighter::Cpp;
}
#endif

// A child of a highlighted document: re-attaches the highlighter when the application palette turns from
// light to dark or back, so the colours follow a theme change in documents already open.
class PaletteWatcher : public QObject
{
public:
    PaletteWatcher(QTextDocument *document, const QString &language, bool dark)
        : QObject(document)
        , m_document(document)
        , m_language(language)
        , m_dark(dark)
    {
        setObjectName(QStringLiteral("autocompPaletteWatcher"));
        if (QCoreApplication *app = QCoreApplication::instance())
            app->installEventFilter(this);
    }
    void update(const QString &language, bool dark)
    {
        m_language = language;
        m_dark = dark;
    }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (watched == QCoreApplication::instance() && event->type() == QEvent::ApplicationPaletteChange && m_document
            && StatusPalette::isDark(QGuiApplication::palette()) != m_dark)
            CodeHighlighter::attach(m_document, m_language); // updates this watcher
        return false;
    }

private:
    QPointer<QTextDocument> m_document;
    QString m_language;
    bool m_dark;
};

} // namespace

QSyntaxHighlighter *CodeHighlighter::attach(QTextDocument *document, const QString &language)
{
    const auto existing = document->findChildren<QSyntaxHighlighter *>(Qt::FindDirectChildrenOnly);
    for (QSyntaxHighlighter *highlighter : existing) {
        highlighter->setDocument(nullptr);
        delete highlighter;
    }
    auto *watcher = static_cast<PaletteWatcher *>(
        document->findChild<QObject *>(QStringLiteral("autocompPaletteWatcher"), Qt::FindDirectChildrenOnly));
    const QString canonical = canonicalLanguage(language);
    if (canonical.isEmpty()) {
        delete watcher;
        return nullptr;
    }
    const bool dark = StatusPalette::isDark(QGuiApplication::palette());
    if (watcher)
        watcher->update(language, dark);
    else
        new PaletteWatcher(document, language, dark);
#ifdef AUTOCOMP_HAVE_KSYNTAXHIGHLIGHTING
    const KSyntaxHighlighting::Definition definition = repository().definitionForFileName(fileNameFor(canonical));
    if (!definition.isValid())
        return nullptr;
    auto *highlighter = new KSyntaxHighlighting::SyntaxHighlighter(document);
    highlighter->setTheme(repository().defaultTheme(dark ? KSyntaxHighlighting::Repository::DarkTheme
                                                         : KSyntaxHighlighting::Repository::LightTheme));
    highlighter->setDefinition(definition);
    return highlighter;
#else
    return new BuiltinHighlighter(document, builtinLanguage(canonical), dark);
#endif
}

QString CodeHighlighter::languageForTarget(const QString &target)
{
    const QString name = target.toLower();
    // A target's backend.yaml says its language; this guess is for runs of targets not installed here.
    if (name.contains(QLatin1String("kernelbench")) || name.contains(QLatin1String("gpumode"))
        || name.contains(QLatin1String("gpu-mode")))
        return QStringLiteral("python");
    if (name.contains(QLatin1String("cuda")))
        return QStringLiteral("cuda");
    if (name.contains(QLatin1String("nki")) || name.contains(QLatin1String("trainium"))
        || name.contains(QLatin1String("tpu")) || name.contains(QLatin1String("pallas")))
        return QStringLiteral("python");
    if (name.contains(QLatin1String("gemmini")))
        return QStringLiteral("c");
    return QStringLiteral("cpp");
}

} // namespace autocomp
