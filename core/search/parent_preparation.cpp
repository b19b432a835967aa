// What a parent's plan prompts need asked first, once per parent and phase: the ISA filter's selection
// (search.isa_filter), the one-shot menu's strategies (search.menu_strategy) and the examples a model
// picked (search.example_rate).
#include "search/search_engine.h"

#include "agents/isa_filter.h"
#include "search/example_selection.h"
#include "search/menu_strategy.h"

namespace autocomp {

void SearchEngine::prepareParent(qint64 parentId, qint64 key)
{
    const SearchConfig &s = m_setup.config.search;
    const bool translation = inTranslation() && !m_setup.agent.translationMenu.isEmpty();
    auto prep = std::make_shared<ParentPrep>();
    auto done = [this, key, prep] {
        m_prep.insert(key, *prep);
        const QList<std::function<void()>> waiting = m_prepWaiting.take(key);
        for (const auto &send : waiting)
            send();
    };
    auto examples = [this, parentId, prep, done] {
        if (!m_setup.config.search.exampleRate || m_setup.agent.codeExamples.isEmpty()) {
            done();
            return;
        }
        selectExamples(parentId, prep->isaDocs.value_or(m_setup.agent.isaDocs), [prep, done](const QList<int> &picked) {
            prep->examples = picked;
            done();
        });
    };
    auto menu = [this, parentId, prep, examples,
                 oneShot = s.menuStrategy == QLatin1String("one-shot") && !translation] {
        if (!oneShot) {
            examples();
            return;
        }
        proposeStrategies(parentId, prep->isaDocs.value_or(m_setup.agent.isaDocs),
                          [prep, examples](const QStringList &proposed) {
                              prep->proposed = proposed;
                              examples();
                          });
    };
    if (s.isaFilter && IsaFilter::parse(m_setup.agent.isaDocs).size() > 1) {
        filterIsa(parentId, [prep, menu](const QString &isa) {
            prep->isaDocs = isa;
            menu();
        });
    } else {
        menu();
    }
}

QStringList SearchEngine::menuFor(qint64 parentId) const
{
    if (inTranslation() && !m_setup.agent.translationMenu.isEmpty())
        return m_setup.agent.translationMenu;
    return m_setup.agent.menu + m_prep.value(prepKey(parentId)).proposed;
}

void SearchEngine::proposeStrategies(qint64 parentId, const QString &isaDocs,
                                     const std::function<void(const QStringList &)> &done)
{
    const Candidate parent = m_candidates.value(parentId);
    const QString prompt = MenuStrategy::oneShotPrompt(m_setup.agent, m_setup.problem, m_setup.target, parent.code,
                                                       m_setup.agent.menu, isaDocs);
    sendLlm(
        MenuStrategy::oneShotPhase(), m_setup.planModels.first(), prompt, 0, parentId,
        [this, parentId, done](const LlmResponse &response, qint64) {
            if (!response.ok) {
                log(QStringLiteral("one-shot menu for candidate %1 failed (%2); the agent's menu alone is used")
                        .arg(parentId)
                        .arg(response.error));
                done({});
                return;
            }
            const QStringList proposed = MenuStrategy::parse(response.text, m_setup.agent.menu);
            log(QStringLiteral("one-shot menu for candidate %1: %2 new strategies").arg(parentId).arg(proposed.size()));
            done(proposed);
        });
}

void SearchEngine::selectExamples(qint64 parentId, const QString &isaDocs,
                                  const std::function<void(const QList<int> &)> &done)
{
    const Candidate parent = m_candidates.value(parentId);
    const QList<CodeExample> &all = m_setup.agent.codeExamples;
    const QString prompt = ExampleSelection::prompt(all, m_setup.problem, m_setup.target, parent.code, isaDocs);
    sendLlm(
        ExampleSelection::phase(), m_setup.planModels.first(), prompt, 0, parentId,
        [this, parentId, done, count = int(all.size())](const LlmResponse &response, qint64) {
            if (!response.ok) {
                log(QStringLiteral("example choice for candidate %1 failed (%2); no examples are shown")
                        .arg(parentId)
                        .arg(response.error));
                done({});
                return;
            }
            done(ExampleSelection::parse(response.text, count));
        },
        0.0);
}

void SearchEngine::filterIsa(qint64 parentId, const std::function<void(const QString &)> &done)
{
    const QList<IsaFilter::Section> sections = IsaFilter::parse(m_setup.agent.isaDocs);
    const Candidate parent = m_candidates.value(parentId);
    const QString problem = m_setup.problem.name + QStringLiteral(": ") + m_setup.problem.description;
    const ModelSpec &model = m_setup.planModels.first();
    // Done: the selection is known (or the question failed: then the whole ISA is kept).
    auto finish = [done](const QString &isa) { done(isa); };
    sendLlm(QStringLiteral("isa"), model, IsaFilter::sectionPrompt(sections, problem, parent.code), 0, parentId,
            [this, sections, problem, parent, model, finish](const LlmResponse &response, qint64) {
                if (!response.ok) {
                    log(QStringLiteral("ISA filter for candidate %1 failed (%2); the whole ISA is used")
                            .arg(parent.id)
                            .arg(response.error));
                    finish(m_setup.agent.isaDocs);
                    return;
                }
                QList<int> kept;
                for (int n : IsaFilter::parseNumbers(response.text, int(sections.size())))
                    kept << n - 1;
                auto entries = std::make_shared<QHash<int, QList<int>>>();
                auto pending = std::make_shared<int>(0);
                for (int s : std::as_const(kept))
                    if (sections.at(s).entries.size() > 1)
                        ++*pending;
                if (*pending == 0) {
                    finish(IsaFilter::assemble(sections, kept, *entries));
                    return;
                }
                for (int s : std::as_const(kept)) {
                    if (sections.at(s).entries.size() <= 1)
                        continue;
                    sendLlm(QStringLiteral("isa"), model, IsaFilter::entryPrompt(sections.at(s), problem, parent.code),
                            0, parent.id, [sections, kept, entries, pending, s, finish](const LlmResponse &r, qint64) {
                                if (r.ok) {
                                    QList<int> chosen;
                                    for (int n : IsaFilter::parseNumbers(r.text, int(sections.at(s).entries.size())))
                                        chosen << n - 1;
                                    entries->insert(s, chosen);
                                }
                                if (--*pending == 0)
                                    finish(IsaFilter::assemble(sections, kept, *entries));
                            });
                }
            });
}

} // namespace autocomp
